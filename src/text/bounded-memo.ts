/**
 * A bounded memo of answers: two generations of at most `limit / 2` entries
 * each. A hit in the old generation is copied into the young one; when the
 * young one is full, it becomes the old one and the previous old one is
 * dropped. So it holds at most `limit` entries and keeps what was used
 * recently (an approximate LRU) for one or two `Map` lookups per call: an
 * exact LRU's delete and re-insert on every hit cost about as much as the
 * work it saves.
 */
export class BoundedMemo<V> {
  readonly #half: number;
  #young = new Map<string, V>();
  #old = new Map<string, V>();

  constructor(limit: number) {
    this.#half = Math.max(1, Math.floor(limit / 2));
  }

  /** Entries held: never more than the limit (rounded down to even, at least 2). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }

  get(key: string): V | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  /** Forgets `key` in both generations. */
  delete(key: string): void {
    this.#young.delete(key);
    this.#old.delete(key);
  }

  set(key: string, value: V): void {
    if (this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}
