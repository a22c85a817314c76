import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

import type { Logger } from '../options.ts';
import type { Category } from './categories.ts';

/** A letter to send: everything the worker needs, so the inbox entry may be deleted meanwhile. */
export interface LetterJob {
  /** The notification id; also the queue's job id, so a letter is queued once. */
  id: string;
  accountId: string;
  clientId: string;
  category: Category;
  title: string;
  body: string;
  url: string | null;
}

/** What the worker decided: sent, or skipped and why (settings changed since the 202, no address, ...). */
export type LetterOutcome = 'sent' | 'already_sent' | `skipped:${string}`;

/** A failure the worker must not retry (a 5xx from the mail server: the address or letter is refused for good). */
export class PermanentLetterError extends Error {}

export interface LetterQueueOptions {
  /** Tries per letter before it is given up (4xx and network errors are retried). */
  attempts: number;
  /** First retry after this many ms; each next one waits twice as long. */
  backoffMs: number;
  /** Letters sent at once by this process. */
  concurrency: number;
  /** How soon a letter whose worker died is taken up again (BullMQ lock and stalled check). */
  stalledIntervalMs: number;
}

export interface LetterQueue {
  /** Durably queues a letter (resolves once stored); the same id twice is one letter. */
  add(job: LetterJob): Promise<void>;
  /** Starts sending letters in this process. */
  startWorker(process: (job: LetterJob) => Promise<LetterOutcome>): void;
  /** Letters not sent yet (waiting, delayed or being sent). */
  pending(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The letter queue on the plugin's Redis: BullMQ, job id = notification id.
 * A letter queued before the 202 survives a crash of this process; a worker
 * that dies while sending leaves the job "stalled", and another (or the same,
 * restarted) takes it up again.
 */
export function bullmqLetterQueue(redis: Redis | Cluster, keyPrefix: string, options: LetterQueueOptions, logger: Logger): LetterQueue {
  // Under the plugin's prefix; the braces make every BullMQ key of the queue
  // one Cluster hash tag, as BullMQ requires.
  const prefix = `${keyPrefix}{letters}`;
  const queue = new Queue<LetterJob>('letters', { connection: redis as Redis, prefix });
  queue.on('error', (err) => logger.error('letter queue error', { reason: err.message }));
  let worker: Worker<LetterJob, LetterOutcome> | undefined;
  let workerConnection: Redis | Cluster | undefined;

  return {
    async add(job) {
      await queue.add('letter', job, {
        jobId: job.id,
        attempts: options.attempts,
        backoff: { type: 'exponential', delay: options.backoffMs },
        // Finished jobs go after a day (the Idempotency-Key window); the
        // worker's sent marker covers what comes later.
        removeOnComplete: { age: 24 * 60 * 60 },
        removeOnFail: { age: 7 * 24 * 60 * 60 },
      });
    },
    startWorker(process) {
      if (worker) return;
      // Blocking commands need a connection of their own, which never gives up retrying.
      workerConnection = 'isCluster' in redis && redis.isCluster
        ? (redis as Cluster).duplicate(undefined, { redisOptions: { ...(redis as Cluster).options.redisOptions, maxRetriesPerRequest: null } })
        : (redis as Redis).duplicate({ maxRetriesPerRequest: null });
      worker = new Worker<LetterJob, LetterOutcome>('letters', async (job: Job<LetterJob>) => {
        try {
          return await process(job.data);
        } catch (err) {
          if (err instanceof PermanentLetterError) throw new UnrecoverableError(err.message);
          throw err;
        }
      }, {
        connection: workerConnection as Redis,
        prefix,
        concurrency: options.concurrency,
        stalledInterval: options.stalledIntervalMs,
        // A dead worker's letter is free again after this long (BullMQ renews the lock at half of it).
        lockDuration: options.stalledIntervalMs,
        maxStalledCount: 10,
      });
      worker.on('error', (err) => logger.error('letter worker error', { reason: err.message }));
      worker.on('failed', (job, err) => {
        if (!job) return;
        const final = err instanceof UnrecoverableError || job.attemptsMade >= options.attempts;
        logger.warn(final ? 'letter given up' : 'letter will be retried', { notificationId: job.id, attempt: job.attemptsMade, reason: err.message });
      });
    },
    async pending() {
      const counts = await queue.getJobCounts('wait', 'delayed', 'active', 'prioritized', 'waiting-children');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    },
    async close() {
      await worker?.close();
      await queue.close();
      workerConnection?.disconnect();
    },
  };
}

/**
 * The embedded mode's queue: in this process only, with the same retries.
 * Like everything in the embedded store, letters not sent yet are lost when
 * the process stops.
 */
export function memoryLetterQueue(options: LetterQueueOptions, logger: Logger): LetterQueue {
  // Ids queued and not finished; a finished one queued again is caught by the sent marker.
  const known = new Set<string>();
  const waiting: { job: LetterJob; attempt: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let running = 0;
  let closed = false;
  let process: ((job: LetterJob) => Promise<LetterOutcome>) | undefined;

  function pump(): void {
    while (process && !closed && running < options.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      running += 1;
      process(next.job).then(() => known.delete(next.job.id), (err: Error) => {
        const attempt = next.attempt + 1;
        if (err instanceof PermanentLetterError || attempt >= options.attempts) {
          logger.warn('letter given up', { notificationId: next.job.id, attempt, reason: err.message });
          known.delete(next.job.id);
          return;
        }
        logger.warn('letter will be retried', { notificationId: next.job.id, attempt, reason: err.message });
        const timer = setTimeout(() => {
          timers.delete(timer);
          waiting.push({ job: next.job, attempt });
          pump();
        }, options.backoffMs * 2 ** (attempt - 1));
        timers.add(timer);
      }).finally(() => {
        running -= 1;
        pump();
      });
    }
  }

  return {
    async add(job) {
      if (known.has(job.id)) return;
      known.add(job.id);
      waiting.push({ job, attempt: 0 });
      queueMicrotask(pump);
    },
    startWorker(fn) {
      process = fn;
      pump();
    },
    async pending() {
      return waiting.length + running + timers.size;
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
