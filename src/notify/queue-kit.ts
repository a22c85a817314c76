import type { Job, Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

import type { Logger } from '../host.ts';
import { asUnavailable } from '../store/availability.ts';

/*
 * What the plugin's BullMQ queues (letters, logouts, Shared Signals) share:
 * the log of a failing connection, the worker's own connection, and taking
 * a person's jobs out (plugin.deleteAccount).
 */

/**
 * During an outage BullMQ reports every failed reconnect: one line per
 * reason every 10 s, with how many were left out, keeps the log readable.
 */
export function throttled(logger: Logger, message: string, everyMs = 10_000): (err: Error) => void {
  const last = new Map<string, { at: number; dropped: number }>();
  return (err) => {
    const now = Date.now();
    const seen = last.get(err.message);
    if (seen && now - seen.at < everyMs) {
      seen.dropped += 1;
      return;
    }
    logger.error(message, { reason: err.message, ...(seen?.dropped ? { repeated: seen.dropped } : {}) });
    last.set(err.message, { at: now, dropped: 0 });
    if (last.size > 100) last.clear();
  };
}

/**
 * A BullMQ worker's connection: blocking commands need one of their own,
 * which never gives up retrying. It waits out an outage (BullMQ's own
 * retries), unlike the request path's client. The logout and Shared
 * Signals queues' workers use it too.
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

/** How the embedded mode's in-process queue (below) tells its owner of each try's end. */
export interface InProcessQueueHooks<J, R> {
  /** The job's id: the same id queued twice while the first is not finished is one job. */
  id(job: J): string;
  attempts: number;
  /** First retry after this many ms; each next one waits twice as long (as BullMQ's exponential backoff). */
  backoffMs: number;
  concurrency: number;
  /** A failure not worth trying again (BullMQ's UnrecoverableError). */
  permanent?(err: Error): boolean;
  done?(job: J, result: R): void;
  retrying?(job: J, attempt: number, err: Error): void;
  givenUp?(job: J, attempt: number, err: Error): void;
}

/**
 * The embedded mode's twin of a BullMQ queue and its worker: in this process
 * only, with the same concurrency, tries and backoff. Like everything in the
 * embedded store, jobs not finished are lost when the process stops. The
 * letters and the Shared Signals use it.
 */
export function inProcessQueue<J, R>(hooks: InProcessQueueHooks<J, R>) {
  // Ids queued and not finished.
  const known = new Set<string>();
  const waiting: { job: J; attempt: number }[] = [];
  // Retry timers and the job each brings back (drop takes it).
  const timers = new Map<NodeJS.Timeout, J>();
  let running = 0;
  let closed = false;
  // The job and which try this is (the first is 1).
  let process: ((job: J, attempt: number) => Promise<R>) | undefined;
  // Wakes stopWorker() when the last job in hand is done.
  let idle: (() => void) | undefined;

  function pump(): void {
    while (process && !closed && running < hooks.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      running += 1;
      process(next.job, next.attempt + 1).then((result) => {
        known.delete(hooks.id(next.job));
        hooks.done?.(next.job, result);
      }, (err: Error) => {
        const attempt = next.attempt + 1;
        if (hooks.permanent?.(err) || attempt >= hooks.attempts) {
          known.delete(hooks.id(next.job));
          hooks.givenUp?.(next.job, attempt, err);
          return;
        }
        hooks.retrying?.(next.job, attempt, err);
        const timer = setTimeout(() => {
          timers.delete(timer);
          waiting.push({ job: next.job, attempt });
          pump();
        }, hooks.backoffMs * 2 ** (attempt - 1));
        timers.set(timer, next.job);
      }).finally(() => {
        running -= 1;
        pump();
        if (running === 0) idle?.();
      });
    }
  }

  return {
    async add(job: J): Promise<void> {
      const id = hooks.id(job);
      if (known.has(id)) return;
      known.add(id);
      waiting.push({ job, attempt: 0 });
      queueMicrotask(pump);
    },
    startWorker(fn: (job: J, attempt: number) => Promise<R>): void {
      process = fn;
      pump();
    },
    async stopWorker(): Promise<void> {
      process = undefined;
      if (running > 0) await new Promise<void>((resolve) => { idle = resolve; });
      idle = undefined;
    },
    async pending(): Promise<number> {
      return waiting.length + running + timers.size;
    },
    /** Takes out the jobs waiting or waiting to be tried again that match (one in hand finishes); returns how many. */
    drop(matches: (job: J) => boolean): number {
      const kept = waiting.filter(({ job }) => !matches(job));
      let dropped = waiting.length - kept.length;
      for (const { job } of waiting) if (matches(job)) known.delete(hooks.id(job));
      waiting.splice(0, waiting.length, ...kept);
      for (const [timer, job] of timers) {
        if (!matches(job)) continue;
        clearTimeout(timer);
        timers.delete(timer);
        known.delete(hooks.id(job));
        dropped += 1;
      }
      return dropped;
    },
    async close(): Promise<void> {
      closed = true;
      for (const timer of timers.keys()) clearTimeout(timer);
    },
  };
}
