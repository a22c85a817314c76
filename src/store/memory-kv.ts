/**
 * The embedded store's data: strings, hashes and sorted sets with millisecond
 * expiry, the subset of Redis the plugin's scripts use. Expired keys vanish on
 * access and in a periodic sweep, so memory is bounded by live data.
 */
type Value =
  | { t: 'string'; v: string }
  | { t: 'hash'; v: Map<string, string> }
  | { t: 'zset'; v: Map<string, number> };

export class MemoryKV {
  #data = new Map<string, Value>();
  #expires = new Map<string, number>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(sweepEveryMs = 60_000) {
    if (sweepEveryMs > 0) {
      this.#sweeper = setInterval(() => this.sweep(), sweepEveryMs);
      this.#sweeper.unref();
    }
  }

  close(): void {
    if (this.#sweeper) clearInterval(this.#sweeper);
  }

  sweep(now = Date.now()): void {
    for (const [key, at] of this.#expires) {
      if (at <= now) this.del(key);
    }
  }

  #live(key: string): Value | undefined {
    const at = this.#expires.get(key);
    if (at !== undefined && at <= Date.now()) {
      this.del(key);
      return undefined;
    }
    return this.#data.get(key);
  }

  #typed<T extends Value['t']>(key: string, t: T): Extract<Value, { t: T }> | undefined {
    const value = this.#live(key);
    if (value && value.t !== t) throw new TypeError(`WRONGTYPE ${key} holds a ${value.t}`);
    return value as Extract<Value, { t: T }> | undefined;
  }

  #create<T extends Value['t']>(key: string, t: T): Extract<Value, { t: T }> {
    let value = this.#typed(key, t);
    if (!value) {
      value = { t, v: new Map() } as unknown as Extract<Value, { t: T }>;
      this.#data.set(key, value);
    }
    return value;
  }

  exists(key: string): boolean {
    return this.#live(key) !== undefined;
  }

  del(...keys: string[]): number {
    let n = 0;
    for (const key of keys) {
      if (this.#data.delete(key)) n += 1;
      this.#expires.delete(key);
    }
    return n;
  }

  keys(): string[] {
    return [...this.#data.keys()].filter((key) => this.exists(key));
  }

  /** Like PTTL: -2 missing, -1 no expiry, else milliseconds left. */
  pttl(key: string): number {
    if (!this.exists(key)) return -2;
    const at = this.#expires.get(key);
    return at === undefined ? -1 : Math.max(0, at - Date.now());
  }

  pexpire(key: string, ms: number): boolean {
    return this.pexpireat(key, Date.now() + ms);
  }

  pexpireat(key: string, at: number): boolean {
    if (!this.exists(key)) return false;
    if (at <= Date.now()) this.del(key);
    else this.#expires.set(key, at);
    return true;
  }

  get(key: string): string | null {
    return this.#typed(key, 'string')?.v ?? null;
  }

  /** SET with optional PX; keeps nothing of an older value, like Redis. */
  set(key: string, value: string, px?: number): void {
    this.del(key);
    this.#data.set(key, { t: 'string', v: value });
    if (px !== undefined) this.pexpire(key, px);
  }

  incrby(key: string, by: number): number {
    const current = this.get(key);
    const next = (current === null ? 0 : Number(current)) + by;
    const at = this.#expires.get(key);
    this.#data.set(key, { t: 'string', v: String(next) });
    if (at !== undefined) this.#expires.set(key, at);
    return next;
  }

  hget(key: string, field: string): string | null {
    return this.#typed(key, 'hash')?.v.get(field) ?? null;
  }

  hmget(key: string, fields: string[]): (string | null)[] {
    const hash = this.#typed(key, 'hash')?.v;
    return fields.map((f) => hash?.get(f) ?? null);
  }

  hgetall(key: string): Record<string, string> {
    return Object.fromEntries(this.#typed(key, 'hash')?.v ?? []);
  }

  hset(key: string, entries: Record<string, string>): void {
    const hash = this.#create(key, 'hash').v;
    for (const [f, v] of Object.entries(entries)) hash.set(f, v);
  }

  hsetnx(key: string, field: string, value: string): boolean {
    const hash = this.#create(key, 'hash').v;
    if (hash.has(field)) return false;
    hash.set(field, value);
    return true;
  }

  hdel(key: string, ...fields: string[]): number {
    const value = this.#typed(key, 'hash');
    if (!value) return 0;
    let n = 0;
    for (const f of fields) if (value.v.delete(f)) n += 1;
    if (value.v.size === 0) this.del(key);
    return n;
  }

  hincrby(key: string, field: string, by: number): number {
    const hash = this.#create(key, 'hash').v;
    const next = Number(hash.get(field) ?? 0) + by;
    hash.set(field, String(next));
    return next;
  }

  zadd(key: string, score: number, member: string): void {
    this.#create(key, 'zset').v.set(member, score);
  }

  zrem(key: string, ...members: string[]): number {
    const value = this.#typed(key, 'zset');
    if (!value) return 0;
    let n = 0;
    for (const m of members) if (value.v.delete(m)) n += 1;
    if (value.v.size === 0) this.del(key);
    return n;
  }

  zscore(key: string, member: string): number | null {
    return this.#typed(key, 'zset')?.v.get(member) ?? null;
  }

  zcard(key: string): number {
    return this.#typed(key, 'zset')?.v.size ?? 0;
  }

  /** Members ordered by score then member, like ZRANGE key 0 -1 WITHSCORES. */
  zentries(key: string): [string, number][] {
    const entries = [...(this.#typed(key, 'zset')?.v ?? [])];
    return entries.sort(([am, as], [bm, bs]) => as - bs || (am < bm ? -1 : am > bm ? 1 : 0));
  }

  zremrangebyscore(key: string, min: number, max: number): number {
    const value = this.#typed(key, 'zset');
    if (!value) return 0;
    let n = 0;
    for (const [m, s] of value.v) {
      if (s >= min && s <= max) {
        value.v.delete(m);
        n += 1;
      }
    }
    if (value.v.size === 0) this.del(key);
    return n;
  }
}
