import { decodeJwt } from 'jose';

import type { Logger } from '../host.ts';
import { dropJobs, DONE_STATES, durableQueue, type RedisClient } from '../queue/durable.ts';
import { inProcessQueue } from '../queue/in-process.ts';
import type { Signal } from './signal.ts';

/**
 * A job of the Shared Signals queue: a cause to fan out to the sites'
 * streams, or one signed SET to deliver to one site.
 */
export type SsfJob =
  | { kind: 'signal'; id: string; signal: Signal }
  | { kind: 'set'; id: string; clientId: string; set: string };

export interface SsfQueueOptions {
  attempts: number;
  backoffMs: number;
  concurrency: number;
  stalledIntervalMs: number;
  /** Seconds a finished or given-up job is kept (its id stops a second delivery meanwhile). */
  keepSeconds: number;
}

export interface SsfQueue {
  /** Durably queues a job (resolves once stored); the same id twice is one job. */
  add(job: SsfJob): Promise<void>;
  /** Starts delivering in this process; `attempt`: which try of the job this is (the first is 1). */
  startWorker(process: (job: SsfJob, attempt: number) => Promise<void>): void;
  stopWorker(): Promise<void>;
  /** Jobs not done yet. */
  pending(): Promise<number>;
  /**
   * The person is deleted: takes out the causes about them (but an
   * account-purged still to be fanned out) and the SETs already delivered
   * or given up whose subject is one of theirs. SETs still to deliver stay
   * (they tell the sites). Returns how many jobs were taken.
   */
  dropAccount(accountId: string, subjects: string[]): Promise<number>;
  close(): Promise<void>;
}

const purged = (job: SsfJob) => job.kind === 'signal' && job.signal.kind === 'account_purged';

/** Whether a SET's subject (`sub_id`) is one of these. */
function aboutSubject(set: string, subjects: string[]): boolean {
  try {
    const { sub_id: subId } = decodeJwt(set) as { sub_id?: Record<string, unknown> };
    return Object.values(subId ?? {}).some((value) => typeof value === 'string' && subjects.includes(value));
  } catch {
    return false;
  }
}

/** BullMQ job ids may not contain ':' beyond its own use; ours are base64url and dots. */
const jobId = (job: SsfJob) => `${job.kind}.${job.id}`;

/**
 * The queue on the plugin's Redis, as the letters' (src/notify/letters.ts):
 * a job stored before the cause's answer survives a crash; a worker that
 * dies while sending leaves it stalled for another to take up; failures are
 * retried with exponential backoff. Logs name the site and the job, never
 * the SET or a header.
 */
export function bullmqSsfQueue(redis: RedisClient, keyPrefix: string, options: SsfQueueOptions, logger: Logger): SsfQueue {
  const durable = durableQueue<SsfJob>(redis, keyPrefix, {
    of: 'sharedSignals', label: 'security event', logger, concurrency: options.concurrency, stalledIntervalMs: options.stalledIntervalMs,
    keep: { completedSeconds: options.keepSeconds, failedSeconds: options.keepSeconds },
  });
  return {
    async add(job) {
      await durable.add(job.kind, job, {
        jobId: jobId(job),
        attempts: options.attempts,
        backoff: { type: 'exponential', delay: options.backoffMs },
        // An account-purged cause (the person's sites and subjects) goes once fanned out.
        removeOnComplete: purged(job) ? true : { age: options.keepSeconds },
        removeOnFail: { age: options.keepSeconds },
      });
    },
    async dropAccount(accountId, subjects) {
      const { queue } = durable;
      const causes = await dropJobs(queue, (data) => data.kind === 'signal' && data.signal.accountId === accountId && !purged(data));
      const doneCauses = await dropJobs(queue, (data) => data.kind === 'signal' && data.signal.accountId === accountId, DONE_STATES);
      const sets = await dropJobs(queue, (data) => data.kind === 'set' && aboutSubject(data.set, subjects), DONE_STATES);
      return causes + doneCauses + sets;
    },
    startWorker(process) {
      durable.startWorker((job) => process(job.data, job.attempt), {
        failed: ({ data, id, attempt, final, err }) => {
          const clientId = data.kind === 'set' ? data.clientId : undefined;
          logger.warn(final ? 'security event given up' : 'security event will be retried', { job: id, clientId, attempt, reason: err.message });
        },
      });
    },
    stopWorker: durable.stopWorker,
    pending: durable.pending,
    close: durable.close,
  };
}

/** The embedded store's twin: in this process only, the same retries; lost on restart, as everything embedded. */
export function memorySsfQueue(options: SsfQueueOptions, logger: Logger): SsfQueue {
  const clientOf = (job: SsfJob) => (job.kind === 'set' ? job.clientId : undefined);
  const queue = inProcessQueue<SsfJob, void>({
    id: jobId,
    attempts: options.attempts,
    backoffMs: options.backoffMs,
    concurrency: options.concurrency,
    retrying: (job, attempt, err) => logger.warn('security event will be retried', { job: jobId(job), clientId: clientOf(job), attempt, reason: err.message }),
    givenUp: (job, attempt, err) => logger.warn('security event given up', { job: jobId(job), clientId: clientOf(job), attempt, reason: err.message }),
  });
  return {
    ...queue,
    // Nothing done is kept in this process: only causes still to run are taken.
    dropAccount: async (accountId) => queue.drop((job) => job.kind === 'signal' && job.signal.accountId === accountId && !purged(job)),
  };
}
