import type { Logger } from '../host.ts';
import { DONE_STATES, dropJobs, durableQueue, type RedisClient } from '../queue/durable.ts';
import { asUnavailable } from '../store/availability.ts';
import { inProcessQueue } from '../queue/in-process.ts';

/**
 * One back-channel logout to deliver: who, which site, which session there.
 * Never the logout token: the worker has oidc-provider sign a fresh one at
 * each try (Client#backchannelLogout), so no token sits in Redis.
 */
export interface LogoutJob {
  /** Hash of site, session (or person) and cause: the queue's job id, so a logout is queued once. */
  id: string;
  accountId: string;
  clientId: string;
  /** The session at the site, for a site that requires `sid`. */
  sid?: string | undefined;
  /** The sign-out in a browser it belongs to (its signed-out page shows the outcome). */
  signoutId?: string | undefined;
  /** When the sign-out happened (ms since the epoch): the logout is given up `giveUpAfterMs` later. */
  at: number;
  /** The person is deleted (plugin.deleteAccount): still delivered, but no outcome is recorded and no one is told. */
  erased?: boolean | undefined;
}

/** What one try ended with. `retry` throws in the queue, so it is tried again after the backoff. */
export type LogoutTry = 'signed_out' | 'unreachable' | 'already_done' | 'dropped';

export interface LogoutQueueOptions {
  attempts: number;
  backoffMs: number;
  /** How soon a logout whose worker died is taken up again (the letters' setting). */
  stalledIntervalMs: number;
}

/** Tried again: the worker's process throws this so the queue waits the backoff. */
export class RetryLogout extends Error {}

export interface LogoutQueue {
  /**
   * Durably queues a logout, to be first taken up after `backoffMs` (the
   * caller tries it at once meanwhile); the same id twice is one logout.
   */
  add(job: LogoutJob): Promise<void>;
  /** Takes a queued logout out before the queue tries it (the first try went through); a failure leaves it (it then finds itself done). */
  drop(id: string): Promise<void>;
  /** Starts delivering in this process; `tries` counts the queue's tries (the first is 1). */
  startWorker(process: (job: LogoutJob, tries: number) => Promise<LogoutTry>): void;
  stopWorker(): Promise<void>;
  /**
   * The person is deleted: their finished logouts are removed, the ones still
   * to deliver are marked `erased` (delivered, nothing recorded; they go a
   * day after they finish, or with a second deleteAccount). Returns how many
   * were removed.
   */
  dropAccount(accountId: string): Promise<number>;
  close(): Promise<void>;
}

const KEEP_FINISHED_SECONDS = 24 * 60 * 60;

/**
 * After the sign-out's own try (the first), the queue's: `backoffMs` after
 * the logout was queued, then twice that after each failed one
 * (docs/backchannel-logout.md). BullMQ's exponential backoff waits
 * delay * 2^(failures - 1), so its delay is twice `backoffMs`.
 */
const retryDelayMs = (options: LogoutQueueOptions) => 2 * options.backoffMs;

/**
 * The logout queue on the plugin's Redis (BullMQ, job id = LogoutJob.id),
 * beside the letters' and run wherever their worker runs: a logout queued
 * before the sign-out's answer survives a crash of this process.
 */
export function bullmqLogoutQueue(redis: RedisClient, keyPrefix: string, options: LogoutQueueOptions, logger: Logger): LogoutQueue {
  const durable = durableQueue<LogoutJob, LogoutTry>(redis, keyPrefix, { of: 'logouts', label: 'logout', logger, concurrency: 4, stalledIntervalMs: options.stalledIntervalMs });
  const { queue } = durable;
  return {
    async add(job) {
      await durable.add('logout', job, {
        jobId: job.id,
        delay: options.backoffMs,
        // The process decides when to give up (tries or time); this bound is never the one reached.
        attempts: options.attempts + 1,
        backoff: { type: 'exponential', delay: retryDelayMs(options) },
        removeOnComplete: { age: KEEP_FINISHED_SECONDS },
        removeOnFail: { age: KEEP_FINISHED_SECONDS },
      });
    },
    async drop(id) {
      // A job the worker holds is not removed (BullMQ): it reads the outcome and sends nothing.
      await queue.remove(id).catch(() => 0);
    },
    async dropAccount(accountId) {
      const pending = await queue.getJobs(['wait', 'delayed', 'prioritized', 'active'], 0, -1, true).catch(asUnavailable);
      for (const job of pending) {
        if (job?.data.accountId === accountId && !job.data.erased) await job.updateData({ ...job.data, erased: true, signoutId: undefined }).catch(() => undefined);
      }
      return dropJobs(queue, (data) => data.accountId === accountId, DONE_STATES);
    },
    startWorker(process) {
      durable.startWorker((job) => process(job.data, job.attempt));
    },
    stopWorker: durable.stopWorker,
    close: durable.close,
  };
}

/**
 * The embedded mode's logout queue: the in-process twin, with the same
 * delays. Like everything in the embedded store, logouts not delivered yet
 * are lost when the process stops.
 */
export function memoryLogoutQueue(options: LogoutQueueOptions, logger: Logger): LogoutQueue {
  const queue = inProcessQueue<LogoutJob, LogoutTry>({
    id: (job) => job.id,
    // The process decides when to give up (tries or time); RetryLogout asks for another try.
    attempts: Number.POSITIVE_INFINITY,
    firstDelayMs: options.backoffMs,
    backoffMs: retryDelayMs(options),
    concurrency: 4,
    permanent: (err) => !(err instanceof RetryLogout),
    givenUp: (job, _attempt, err) => logger.warn('logout given up', { clientId: job.clientId, reason: err.message }),
  });
  return {
    add: queue.add,
    async drop(id) {
      queue.drop((job) => job.id === id);
    },
    async dropAccount(accountId) {
      // Nothing finished is kept in this process: the ones to come are marked.
      for (const job of queue.jobs()) {
        if (job.accountId !== accountId) continue;
        job.erased = true;
        job.signoutId = undefined;
      }
      return 0;
    },
    startWorker: queue.startWorker,
    stopWorker: queue.stopWorker,
    close: queue.close,
  };
}
