/**
 * At most one write per key per interval in this process, decided in memory:
 * "last used" of a site, "last active" of a session. Remembers at most
 * `remembered` keys; the oldest are forgotten first (a forgotten key's next
 * write simply goes).
 */
export function writeThrottle(intervalMs: number, remembered = 10_000) {
  // Insertion-ordered: re-inserting on write keeps the most recent last.
  const written = new Map<string, number>();
  return {
    /** Whether a write for `key` is due at `now`; if it is, it counts as written now. */
    due(key: string, now: number): boolean {
      const last = written.get(key);
      if (last !== undefined && now - last < intervalMs) return false;
      written.delete(key);
      written.set(key, now);
      if (written.size > remembered) written.delete(written.keys().next().value!);
      return true;
    },
    /** The write failed: the next one is due at once. */
    forget(key: string): void {
      written.delete(key);
    },
  };
}
