import type { Job, Queue } from 'bullmq';

import { asUnavailable } from '../store/availability.ts';

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
