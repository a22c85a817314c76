import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

import { asUnavailable } from '../store/availability.ts';
import { QUEUES, queuePrefix, type QueueOf } from './durable.ts';

/** One of the plugin's queues, as an operator watches it (`plugin.queues()`, `npx oidc-signout-notify queues`). */
export interface QueueCount {
  /** Jobs ready to run, not taken by a worker yet. */
  waiting: number;
  /** Jobs a worker has in hand now. */
  active: number;
  /** Jobs waiting for their time: retries after a failed try, and the schedule's next run. */
  delayed: number;
  /** Jobs given up after their last try, kept for a while (`letters.keepFailedSeconds` for letters). */
  failed: number;
  /** Seconds since the oldest waiting job was queued (its tries included), or null when none waits. */
  oldestWaitingSeconds: number | null;
}

/** The plugin's queues on Redis (docs/operations.md "The queues"). */
export interface QueueCounts {
  /** Letters (`/api/notify`, security notices). */
  letters: QueueCount;
  /** Back-channel logouts to retry (docs/backchannel-logout.md). */
  logouts: QueueCount;
  /** Shared Signals: causes to fan out and SETs to push (docs/shared-signals.md). */
  sharedSignals: QueueCount;
  /** The sweep of sessions that ended by their lifetime (docs/session-expiry.md): its schedule. */
  sessionExpiry: QueueCount;
}

/**
 * Counts each queue's jobs by state, read-only (BullMQ's own counts; no
 * worker is started). Two round trips per queue.
 */
export async function queueCounts(redis: Redis | Cluster, keyPrefix: string, now = Date.now()): Promise<QueueCounts> {
  const counted = await Promise.all((Object.keys(QUEUES) as QueueOf[]).map(async (of) => {
    const queue = new Queue(QUEUES[of].name, { connection: redis as Redis, prefix: queuePrefix(keyPrefix, of) });
    try {
      const [counts, [oldest]] = await Promise.all([queue.getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'), queue.getWaiting(0, 0)]);
      const count: QueueCount = {
        waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
        oldestWaitingSeconds: oldest ? Math.max(0, Math.floor((now - oldest.timestamp) / 1000)) : null,
      };
      return [of, count] as const;
    } catch (err) {
      return asUnavailable(err);
    } finally {
      await queue.close().catch(() => {});
    }
  }));
  return Object.fromEntries(counted) as unknown as QueueCounts;
}
