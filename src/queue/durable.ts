import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions, type QueueOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

import type { Logger } from '../host.ts';
import { asUnavailable } from '../store/availability.ts';
import { throttled } from './log.ts';

/*
 * The plugin's durable queues (BullMQ on the plugin's Redis): the lifecycle
 * written once (start, stop, close, each safe to repeat), the worker's
 * patient connection, the throttled log, the cleaner of finished jobs and
 * taking a person's jobs out. Each domain keeps its job type and its
 * processor (letters, back-channel logouts, Shared Signals, the expiry sweep).
 */

/** The plugin's Redis client, a single node or a Cluster: what a durable queue runs on. */
export type RedisClient = Redis | Cluster;

/** The options of one job (BullMQ's): its id, tries, backoff, delay, how long it is kept. */
export type DurableJobOptions = JobsOptions;

/** Which try this is (the first is 1) and its data: what a domain's processor is given. */
export interface DurableTry<J> {
  data: J;
  attempt: number;
  id: string | undefined;
}

/** A failed try as the domain hears of it: `final` when no try follows (tries spent, or a permanent failure). */
export interface DurableFailure<J> extends DurableTry<J> {
  final: boolean;
  err: Error;
}

/** Each queue's BullMQ name and the hash tag its keys carry under the plugin's prefix (`<keyPrefix>{<tag>}`). */
export const QUEUES = {
  letters: { name: 'letters', tag: 'letters' },
  logouts: { name: 'logouts', tag: 'logouts' },
  sharedSignals: { name: 'ssf', tag: 'ssf' },
  sessionExpiry: { name: 'session-expiry', tag: 'expiry' },
} as const;

export type QueueOf = keyof typeof QUEUES;

/** Where a queue's keys live: under the plugin's prefix, one Cluster hash tag per queue (BullMQ requires it). */
export const queuePrefix = (keyPrefix: string, of: QueueOf) => `${keyPrefix}{${QUEUES[of].tag}}`;

/**
 * A BullMQ worker's connection: blocking commands need one of their own,
 * which never gives up retrying. It waits out an outage (BullMQ's own
 * retries), unlike the request path's client.
 */
export function patientConnection(redis: Redis | Cluster): Redis | Cluster {
  const patient = { maxRetriesPerRequest: null, enableOfflineQueue: true, autoResendUnfulfilledCommands: true, commandTimeout: undefined };
  return 'isCluster' in redis && redis.isCluster
    ? (redis as Cluster).duplicate(undefined, { enableOfflineQueue: true, redisOptions: { ...(redis as Cluster).options.redisOptions, ...patient } })
    : (redis as Redis).duplicate(patient);
}

type JobState = 'wait' | 'delayed' | 'prioritized' | 'waiting-children' | 'completed' | 'failed';
const ALL_STATES: readonly JobState[] = ['wait', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];
/** The states of a job that is done (delivered or given up). */
export const DONE_STATES: readonly JobState[] = ['completed', 'failed'];

/**
 * Removes the queue's jobs whose data matches, in every state a job can be
 * removed in (a job being worked on is locked and stays). Returns how many.
 */
export async function dropJobs<T>(queue: Queue<T>, matches: (data: T) => boolean, states: readonly JobState[] = ALL_STATES): Promise<number> {
  // Found first, removed after: removing while paging would shift the pages.
  const found: Job<T>[] = [];
  for (let start = 0; ; start += 500) {
    const jobs = await queue.getJobs([...states], start, start + 499, true).catch(asUnavailable);
    for (const job of jobs) if (job?.data && matches(job.data)) found.push(job);
    if (jobs.length < 500) break;
  }
  let dropped = 0;
  for (const job of found) await job.remove().then(() => { dropped += 1; }, () => undefined);
  return dropped;
}

export interface DurableQueueOptions {
  of: QueueOf;
  /** What the logs call a job ("letter", "logout", "security event", "session expiry"). */
  label: string;
  logger: Logger;
  /** Jobs worked on at once by this process. */
  concurrency: number;
  /** How soon a job whose worker died is taken up again (BullMQ's lock and stalled check); BullMQ's default when absent. */
  stalledIntervalMs?: number | undefined;
  /**
   * Finished jobs removed past these ages by the worker (BullMQ's
   * removeOnComplete and removeOnFail act only when a later job finishes:
   * the last ones would stay), at most a quarter of the age (and 15 minutes) late.
   */
  keep?: { completedSeconds: number; failedSeconds: number } | undefined;
  queueOptions?: Partial<QueueOptions> | undefined;
  /** A failure not worth trying again (given up at once: BullMQ's UnrecoverableError). */
  permanent?: ((err: Error) => boolean) | undefined;
}

/** The domain's listeners of its worker: each job done, each try failed. */
export interface DurableListeners<J, R> {
  completed?(done: DurableTry<J>, result: R): void;
  failed?(failure: DurableFailure<J>): void;
}

/** One durable queue and, once started, its worker in this process. */
export function durableQueue<J, R = unknown>(redis: RedisClient, keyPrefix: string, options: DurableQueueOptions) {
  const { name } = QUEUES[options.of];
  const prefix = queuePrefix(keyPrefix, options.of);
  const { logger, label } = options;
  const queue = new Queue<J>(name, { ...options.queueOptions, connection: redis as Redis, prefix });
  queue.on('error', throttled(logger, `${label} queue error`));
  let worker: Worker<J, R> | undefined;
  let connection: Redis | Cluster | undefined;
  let cleaner: NodeJS.Timeout | undefined;
  let closed: Promise<void> | undefined;

  const cleanUp = async (keep: NonNullable<DurableQueueOptions['keep']>) => {
    for (const [state, seconds] of [['completed', keep.completedSeconds], ['failed', keep.failedSeconds]] as const) {
      while ((await queue.clean(seconds * 1000, 1000, state)).length === 1000);
    }
  };

  async function stopWorker(): Promise<void> {
    clearInterval(cleaner);
    cleaner = undefined;
    const [stopping, disconnecting] = [worker, connection];
    worker = undefined;
    connection = undefined;
    // close() without force waits for the jobs in hand (BullMQ).
    await stopping?.close();
    disconnecting?.disconnect();
  }

  return {
    queue,

    /** Durably queues a job (resolves once stored); Redis gone: UnavailableError. */
    async add(jobName: string, data: J, opts: DurableJobOptions): Promise<void> {
      await queue.add(jobName as never, data as never, opts).catch(asUnavailable);
    },

    /**
     * Starts working in this process on the patient connection (once: a
     * second call, or one after close(), does nothing and returns false),
     * with the domain's processor and listeners.
     */
    startWorker(processor: (job: DurableTry<J>) => Promise<R>, on: DurableListeners<J, R> = {}): boolean {
      if (worker || closed) return false;
      connection = patientConnection(redis);
      const tryOf = (job: Job<J>): DurableTry<J> => ({ data: job.data, attempt: job.attemptsMade + 1, id: job.id });
      worker = new Worker<J, R>(name, async (job: Job<J>) => {
        try {
          return await processor(tryOf(job));
        } catch (err) {
          if (options.permanent?.(err as Error)) throw new UnrecoverableError((err as Error).message);
          throw err;
        }
      }, {
        connection: connection as Redis,
        prefix,
        concurrency: options.concurrency,
        ...(options.stalledIntervalMs === undefined ? {} : {
          stalledInterval: options.stalledIntervalMs,
          // A dead worker's job is free again after this long (BullMQ renews the lock at half of it).
          lockDuration: options.stalledIntervalMs,
          maxStalledCount: 10,
        }),
      });
      worker.on('error', throttled(logger, `${label} worker error`));
      // Once a try ended, attemptsMade counts it.
      if (on.completed) worker.on('completed', (job, result) => on.completed!({ data: job.data, attempt: job.attemptsMade, id: job.id }, result));
      if (on.failed) {
        worker.on('failed', (job, err) => {
          if (!job) return;
          const final = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
          on.failed!({ data: job.data, attempt: job.attemptsMade, id: job.id, final, err });
        });
      }
      const { keep } = options;
      if (keep) {
        const cleanError = throttled(logger, `${label} queue cleanup failed`);
        cleaner = setInterval(() => { cleanUp(keep).catch(cleanError); }, Math.min(15 * 60_000, Math.max(250, (Math.min(keep.completedSeconds, keep.failedSeconds) * 1000) / 4)));
        cleaner.unref();
      }
      return true;
    },

    /** Stops taking jobs in this process and resolves once the ones in hand are finished; the rest stay queued. */
    stopWorker,

    /** Jobs not done yet (waiting, delayed, being worked on). */
    async pending(): Promise<number> {
      const counts = await queue.getJobCounts('wait', 'delayed', 'active', 'prioritized', 'waiting-children');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    },

    /** The worker, then the queue's connection; the same promise to every call. */
    close(): Promise<void> {
      closed ??= stopWorker().then(() => queue.close());
      return closed;
    },
  };
}

export type DurableQueue<J, R = unknown> = ReturnType<typeof durableQueue<J, R>>;
