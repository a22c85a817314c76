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
