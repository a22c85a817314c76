import { AsyncLocalStorage } from 'node:async_hooks';

import { Queue, Worker, type Job } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

import type { Logger } from '../host.ts';
import { asUnavailable } from '../store/availability.ts';
import { DONE_STATES, dropJobs, patientConnection, throttled } from './queue-kit.ts';

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
 * The logout queue on the plugin's Redis (BullMQ, job id = LogoutJob.id),
 * beside the letters' and run wherever their worker runs: a logout queued
 * before the sign-out's answer survives a crash of this process.
 */
export function bullmqLogoutQueue(redis: Redis | Cluster, keyPrefix: string, options: LogoutQueueOptions, logger: Logger): LogoutQueue {
  const prefix = `${keyPrefix}{logouts}`;
  const queue = new Queue<LogoutJob>('logouts', { connection: redis as Redis, prefix });
  queue.on('error', throttled(logger, 'logout queue error'));
  let worker: Worker<LogoutJob, LogoutTry> | undefined;
  let workerConnection: Redis | Cluster | undefined;

  return {
    async add(job) {
      await queue.add('logout', job, {
        jobId: job.id,
        delay: options.backoffMs,
        // The process decides when to give up (tries or time); this bound is never the one reached.
        attempts: options.attempts + 1,
        // The first try was at the sign-out and the job's delay was the first wait (backoffMs): BullMQ's
        // exponential backoff waits delay * 2^(failures - 1), so the next waits are 2, 4, ... times backoffMs.
        backoff: { type: 'exponential', delay: 2 * options.backoffMs },
        removeOnComplete: { age: KEEP_FINISHED_SECONDS },
        removeOnFail: { age: KEEP_FINISHED_SECONDS },
      }).catch(asUnavailable);
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
      if (worker) return;
      workerConnection = patientConnection(redis);
      worker = new Worker<LogoutJob, LogoutTry>('logouts', (job: Job<LogoutJob>) => process(job.data, job.attemptsMade + 1), {
        connection: workerConnection as Redis,
        prefix,
        concurrency: 4,
        stalledInterval: options.stalledIntervalMs,
        lockDuration: options.stalledIntervalMs,
        maxStalledCount: 10,
      });
      worker.on('error', throttled(logger, 'logout worker error'));
    },
    async stopWorker() {
      await worker?.close();
      worker = undefined;
      workerConnection?.disconnect();
      workerConnection = undefined;
    },
    async close() {
      await worker?.close();
      await queue.close();
      workerConnection?.disconnect();
    },
  };
}

/**
 * The embedded mode's logout queue: in this process, with the same delays.
 * Like everything in the embedded store, logouts not delivered yet are lost
 * when the process stops.
 */
export function memoryLogoutQueue(options: LogoutQueueOptions, logger: Logger): LogoutQueue {
  const known = new Set<string>();
  const timers = new Map<NodeJS.Timeout, LogoutJob>();
  const waiting: { job: LogoutJob; tries: number }[] = [];
  let process: ((job: LogoutJob, tries: number) => Promise<LogoutTry>) | undefined;
  let closed = false;
  // The queue's tries run outside the request that queued them (as BullMQ's
  // worker does): a timer would otherwise carry that request's context along.
  const outside = AsyncLocalStorage.snapshot();

  const later = (job: LogoutJob, tries: number, ms: number) => outside(() => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      waiting.push({ job, tries });
      pump();
    }, ms);
    timer.unref();
    timers.set(timer, job);
  });
  function pump(): void {
    while (process && !closed && waiting.length > 0) {
      const { job, tries } = waiting.shift()!;
      process(job, tries).then(() => known.delete(job.id), (err: Error) => {
        // The `tries`-th try failed: wait 2^tries backoffMs (the first wait, after the sign-out's try, was backoffMs).
        if (err instanceof RetryLogout) later(job, tries + 1, options.backoffMs * 2 ** tries);
        else {
          logger.warn('logout given up', { clientId: job.clientId, reason: err.message });
          known.delete(job.id);
        }
      });
    }
  }

  return {
    async add(job) {
      if (known.has(job.id)) return;
      known.add(job.id);
      later(job, 1, options.backoffMs);
    },
    async drop(id) {
      for (const [timer, of] of timers) {
        if (of.id !== id) continue;
        clearTimeout(timer);
        timers.delete(timer);
        known.delete(id);
      }
    },
    async dropAccount(accountId) {
      // Nothing finished is kept in this process: the ones to come are marked.
      for (const job of [...timers.values(), ...waiting.map((w) => w.job)]) {
        if (job.accountId !== accountId) continue;
        job.erased = true;
        job.signoutId = undefined;
      }
      return 0;
    },
    startWorker(fn) {
      process = fn;
      pump();
    },
    async stopWorker() {
      process = undefined;
    },
    async close() {
      closed = true;
      for (const timer of timers.keys()) clearTimeout(timer);
    },
  };
}
