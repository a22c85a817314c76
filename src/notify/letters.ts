import type { Logger } from '../host.ts';
import { dropJobs, durableQueue, type RedisClient } from '../queue/durable.ts';
import { inProcessQueue } from '../queue/in-process.ts';
import type { LetterEvent } from '../events.ts';
import type { Category } from './categories.ts';

/** A letter to send: everything the worker needs, so the inbox entry may be deleted meanwhile. */
export type LetterJob = NotificationLetterJob | TheftLetterJob | SecurityLetterJob;

/** A site's notification (POST /api/notify). */
export interface NotificationLetterJob {
  kind?: 'notification';
  /** The notification id; also the queue's job id, so a letter is queued once. */
  id: string;
  accountId: string;
  clientId: string;
  category: Category;
  title: string;
  body: string;
  url: string | null;
}

/** The service's own notice that a sign-in of the person's at a site was used twice (theft). */
export interface TheftLetterJob {
  kind: 'theft';
  /** The notice id (the inbox entry's); also the queue's job id. */
  id: string;
  accountId: string;
  clientId: string;
  /** When the reuse was detected (ms since the epoch). */
  at: number;
}

/** A security notice of the service's own (a new browser, a passkey added, ...: src/notify/security-notices.ts). */
export interface SecurityLetterJob {
  kind: 'security';
  /** The notice id (the inbox entry's); also the queue's job id. */
  id: string;
  accountId: string;
  /** Which notice (a SecurityNoticeKind). */
  notice: string;
  /** What it names; a summary of new browsers also counts them (`count`) and says until when (`until`, ms). */
  details: { browser?: string | undefined; name?: string | undefined; count?: number; until?: number; last?: number };
  /** When it happened (ms since the epoch). */
  at: number;
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
  /** Seconds finished jobs are kept (sent or skipped; given up). */
  keepCompletedSeconds: number;
  keepFailedSeconds: number;
}

/** Told of every try of a letter the worker finishes (metrics). */
export type OnLetter = (event: LetterEvent) => void;

/** The worker's outcome as an event. */
function outcomeEvent(notificationId: string, outcome: LetterOutcome): LetterEvent {
  if (outcome === 'sent') return { notificationId, outcome: 'sent' };
  return { notificationId, outcome: 'skipped', reason: outcome === 'already_sent' ? 'already_sent' : outcome.slice('skipped:'.length) };
}

export interface LetterQueue {
  /** Durably queues a letter (resolves once stored); the same id twice is one letter. */
  add(job: LetterJob): Promise<void>;
  /** Starts sending letters in this process. */
  startWorker(process: (job: LetterJob) => Promise<LetterOutcome>): void;
  /**
   * Stops taking letters in this process and resolves once the letters in
   * hand are finished; the rest stay queued for another worker.
   */
  stopWorker(): Promise<void>;
  /** Letters not sent yet (waiting, delayed or being sent). */
  pending(): Promise<number>;
  /** The person is deleted: takes every letter to them out, sent or not (one being sent now finishes); returns how many. */
  dropAccount(accountId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The letter queue on the plugin's Redis: BullMQ, job id = notification id.
 * A letter queued before the 202 survives a crash of this process; a worker
 * that dies while sending leaves the job "stalled", and another (or the same,
 * restarted) takes it up again.
 */
export function bullmqLetterQueue(redis: RedisClient, keyPrefix: string, options: LetterQueueOptions, logger: Logger, onLetter: OnLetter = () => {}): LetterQueue {
  const durable = durableQueue<LetterJob, LetterOutcome>(redis, keyPrefix, {
    of: 'letters', label: 'letter', logger, concurrency: options.concurrency, stalledIntervalMs: options.stalledIntervalMs,
    keep: { completedSeconds: options.keepCompletedSeconds, failedSeconds: options.keepFailedSeconds },
    permanent: (err) => err instanceof PermanentLetterError,
  });
  return {
    async add(job) {
      await durable.add('letter', job, {
        jobId: job.id,
        attempts: options.attempts,
        backoff: { type: 'exponential', delay: options.backoffMs },
        // BullMQ removes jobs past these ages when later jobs finish; the
        // worker's cleaner removes the last ones too. The sent marker covers what comes later.
        removeOnComplete: { age: options.keepCompletedSeconds },
        removeOnFail: { age: options.keepFailedSeconds },
      });
    },
    startWorker(process) {
      durable.startWorker((job) => process(job.data), {
        completed: (job, outcome) => onLetter(outcomeEvent(String(job.id), outcome)),
        failed: ({ id, attempt, final, err }) => {
          logger.warn(final ? 'letter given up' : 'letter will be retried', { notificationId: id, attempt, reason: err.message });
          onLetter({ notificationId: String(id), outcome: final ? 'failed' : 'retry', reason: err.message });
        },
      });
    },
    stopWorker: durable.stopWorker,
    pending: durable.pending,
    dropAccount: (accountId) => dropJobs(durable.queue, (data) => data.accountId === accountId),
    close: durable.close,
  };
}

/**
 * The embedded mode's queue: in this process only, with the same retries.
 * Like everything in the embedded store, letters not sent yet are lost when
 * the process stops.
 */
export function memoryLetterQueue(options: LetterQueueOptions, logger: Logger, onLetter: OnLetter = () => {}): LetterQueue {
  const queue = inProcessQueue<LetterJob, LetterOutcome>({
    id: (job) => job.id,
    attempts: options.attempts,
    backoffMs: options.backoffMs,
    concurrency: options.concurrency,
    permanent: (err) => err instanceof PermanentLetterError,
    done: (job, outcome) => onLetter(outcomeEvent(job.id, outcome)),
    retrying: (job, attempt, err) => {
      logger.warn('letter will be retried', { notificationId: job.id, attempt, reason: err.message });
      onLetter({ notificationId: job.id, outcome: 'retry', reason: err.message });
    },
    givenUp: (job, attempt, err) => {
      logger.warn('letter given up', { notificationId: job.id, attempt, reason: err.message });
      onLetter({ notificationId: job.id, outcome: 'failed', reason: err.message });
    },
  });
  return { ...queue, dropAccount: async (accountId) => queue.drop((job) => job.accountId === accountId) };
}
