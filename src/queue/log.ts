import type { Logger } from '../host.ts';

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
