import { BoundedMemo } from './text/bounded-memo.ts';

/**
 * At most one write per key per interval in this process, decided in memory:
 * "last used" of a site, "last active" of a session. Remembers at most
 * `remembered` keys (a BoundedMemo: what was written recently stays); a
 * forgotten key's next write simply goes.
 */
export function writeThrottle(intervalMs: number, remembered = 10_000) {
  const written = new BoundedMemo<number>(remembered);
  return {
    /** Whether a write for `key` is due at `now`; if it is, it counts as written now. */
    due(key: string, now: number): boolean {
      const last = written.get(key);
      if (last !== undefined && now - last < intervalMs) return false;
      written.set(key, now);
      return true;
    },
    /** The write failed: the next one is due at once. */
    forget(key: string): void {
      written.delete(key);
    },
  };
}
