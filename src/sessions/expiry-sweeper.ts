import type { Logger } from '../host.ts';
import { durableQueue, type RedisClient } from '../queue/durable.ts';
import { asUnavailable } from '../store/availability.ts';

/** Runs the sweep of expired sessions (./expiry.ts) every `sweepEveryMs`, where the letters' worker runs. */
export interface ExpirySweeper {
  start(sweep: () => Promise<number>): void;
  stop(): Promise<void>;
  close(): Promise<void>;
}

const SCHEDULER = 'sweep';

/**
 * On Redis: one repeatable BullMQ job (a job scheduler, shared by every
 * instance: one sweep per period however many run), on the worker's own
 * patient connection as the letters' (src/notify/letters.ts). A sweep that two instances ran at
 * once would still tell each session once (lua/expiry_claim.lua).
 */
export function bullmqExpirySweeper(redis: RedisClient, keyPrefix: string, sweepEveryMs: number, logger: Logger): ExpirySweeper {
  // Only the schedule and its next run stay (each run removes itself); the events stream is kept short.
  const durable = durableQueue<unknown, number>(redis, keyPrefix, {
    of: 'sessionExpiry', label: 'session expiry', logger, concurrency: 1, queueOptions: { streams: { events: { maxLen: 100 } } },
  });
  return {
    start(sweep) {
      if (!durable.startWorker(async () => sweep(), { failed: ({ err }) => logger.warn('session expiry sweep failed', { reason: err.message }) })) return;
      durable.queue.upsertJobScheduler(SCHEDULER, { every: sweepEveryMs }, { name: SCHEDULER, opts: { removeOnComplete: true, removeOnFail: true } })
        .catch(asUnavailable)
        .catch((err: Error) => logger.error('session expiry sweep not scheduled', { reason: err.message }));
    },
    stop: durable.stopWorker,
    close: durable.close,
  };
}

/** The embedded store's twin: a timer in this process. */
export function memoryExpirySweeper(sweepEveryMs: number, logger: Logger): ExpirySweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  return {
    start(sweep) {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .catch((err: Error) => logger.warn('session expiry sweep failed', { reason: err.message }))
          .finally(() => { running = undefined; });
      }, sweepEveryMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
    async close() {
      await this.stop();
    },
  };
}
