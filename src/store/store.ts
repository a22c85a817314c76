import type { Cluster, Redis } from 'ioredis';

import { MemoryKV } from './memory-kv.ts';
import type { Script, ScriptReply } from './scripts.ts';

/**
 * Where the plugin keeps its data: Redis (single node, Sentinel or Cluster)
 * or the embedded in-process store. Callers only ever use these operations,
 * so both behave the same; every read-modify-write is a {@link Script}.
 *
 * Cluster rule: a script touches only keys that share a hash tag; plain
 * operations take one key each.
 */
export interface Store {
  readonly kind: 'redis' | 'memory';
  /**
   * Every key lives on one node (single Redis, Sentinel, the embedded store):
   * a script may also read keys it derives from a record. False on a Cluster.
   */
  readonly singleNode: boolean;
  /** Prepended to every key, e.g. `osn:`. */
  readonly prefix: string;
  run(script: Script, keys: string[], argv: (string | number)[]): Promise<ScriptReply>;
  get(key: string): Promise<string | null>;
  hmget(key: string, fields: string[]): Promise<(string | null)[]>;
  hgetall(key: string): Promise<Record<string, string>>;
  /** Members with scores, lowest score first. */
  zentries(key: string): Promise<[string, number][]>;
  pttl(key: string): Promise<number>;
  /** Deletes keys one by one (they may live in different hash slots). */
  del(keys: string[]): Promise<void>;
  /** Every key under the prefix (SCAN on Redis, never KEYS). For walks and tests. */
  scan(match?: string): AsyncIterable<string>;
  /** Number of commands this store sent; benchmarks and round-trip tests read it. */
  readonly commandsSent: number;
  /**
   * Number of round trips: a round trip starts when a command is sent while
   * none is in flight, so commands sent together count once. Meaningful while
   * one request at a time runs (tests, benchmarks).
   */
  readonly roundTrips: number;
  close(): Promise<void>;
}

export function assertPrefix(prefix: string): string {
  if (/[{}]/.test(prefix)) {
    // A brace in the prefix would become the hash tag of every key and put
    // all data in one Cluster slot.
    throw new TypeError('keyPrefix must not contain { or }');
  }
  return prefix;
}

/** Counts commands and round trips for both stores. */
abstract class CountingStore {
  commandsSent = 0;
  roundTrips = 0;
  #inflight = 0;

  /** Called before each command is sent. */
  protected beforeSend(): void {}

  protected track<T>(commands: number, work: () => Promise<T>): Promise<T> {
    this.beforeSend();
    this.commandsSent += commands;
    if (this.#inflight === 0) this.roundTrips += 1;
    this.#inflight += 1;
    const pending = work();
    // Registered first, so it runs before the caller's continuation sends its next command.
    // (One reaction, not finally(): every promise costs on the hot path.)
    pending.then(this.#settled, this.#settled);
    return pending;
  }

  #settled = () => { this.#inflight -= 1; };
}

export class RedisStore extends CountingStore implements Store {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  readonly client: Redis | Cluster;
  readonly singleNode: boolean;

  constructor(client: Redis | Cluster, prefix: string) {
    super();
    this.client = client;
    this.singleNode = !client.isCluster;
    this.prefix = assertPrefix(prefix);
  }

  #corked = false;

  /**
   * Commands sent during one phase of the event loop leave in one write: the
   * socket is corked at the first and uncorked by setImmediate, which runs
   * right after the phase (a poll phase handles every request that arrived
   * together). Under load that is one syscall for many requests instead of
   * one per command; alone, a command waits for nothing but the rest of the
   * current phase. Single node and Sentinel only: a Cluster client writes to
   * several sockets of its own.
   */
  protected override beforeSend(): void {
    if (this.#corked || !this.singleNode) return;
    const client = this.client as Redis;
    const stream = client.stream;
    if (client.status !== 'ready' || !stream?.writable) return;
    stream.cork();
    this.#corked = true;
    setImmediate(() => {
      this.#corked = false;
      stream.uncork();
    });
  }

  run(script: Script, keys: string[], argv: (string | number)[]): Promise<ScriptReply> {
    return this.track(1, () => (this.client.evalsha(script.sha, keys.length, ...keys, ...argv) as Promise<ScriptReply>)
      .catch((err: unknown) => {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        // First use on this node (or after SCRIPT FLUSH / failover): send the body once.
        this.commandsSent += 1;
        return this.client.eval(script.lua, keys.length, ...keys, ...argv) as Promise<ScriptReply>;
      }));
  }

  get(key: string) {
    return this.track(1, () => this.client.get(key));
  }

  hmget(key: string, fields: string[]) {
    return this.track(1, () => this.client.hmget(key, ...fields));
  }

  hgetall(key: string) {
    return this.track(1, () => this.client.hgetall(key));
  }

  zentries(key: string): Promise<[string, number][]> {
    return this.track(1, async () => {
      const flat = await this.client.zrange(key, '0', '-1', 'WITHSCORES');
      const out: [string, number][] = [];
      for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
      return out;
    });
  }

  pttl(key: string) {
    return this.track(1, () => this.client.pttl(key));
  }

  async del(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    // One DEL per key: in a Cluster the keys may live in different slots.
    await this.track(keys.length, () => Promise.all(keys.map((key) => this.client.del(key))));
  }

  async *scan(match = '*'): AsyncIterable<string> {
    const nodes = 'nodes' in this.client && typeof this.client.nodes === 'function'
      ? (this.client as Cluster).nodes('master')
      : [this.client as Redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${this.prefix}${match}`, 'COUNT', 500);
        cursor = next;
        yield* keys;
      } while (cursor !== '0');
    }
  }

  async close(): Promise<void> {
    // The client is the host's: it closes it.
  }
}

export class MemoryStore extends CountingStore implements Store {
  readonly kind = 'memory' as const;
  readonly singleNode = true;
  readonly prefix: string;
  readonly kv: MemoryKV;

  constructor(prefix: string, kv = new MemoryKV()) {
    super();
    this.prefix = assertPrefix(prefix);
    this.kv = kv;
  }

  run(script: Script, keys: string[], argv: (string | number)[]): Promise<ScriptReply> {
    return this.track(1, async () => script.memory(this.kv, keys, argv.map(String)));
  }

  get(key: string) {
    return this.track(1, async () => this.kv.get(key));
  }

  hmget(key: string, fields: string[]) {
    return this.track(1, async () => this.kv.hmget(key, fields));
  }

  hgetall(key: string) {
    return this.track(1, async () => this.kv.hgetall(key));
  }

  zentries(key: string) {
    return this.track(1, async () => this.kv.zentries(key));
  }

  pttl(key: string) {
    return this.track(1, async () => this.kv.pttl(key));
  }

  async del(keys: string[]) {
    if (keys.length === 0) return;
    await this.track(keys.length, async () => { this.kv.del(...keys); });
  }

  async *scan(match = '*'): AsyncIterable<string> {
    const re = globToRegExp(`${this.prefix}${match}`);
    for (const key of this.kv.keys()) if (re.test(key)) yield key;
  }

  async close(): Promise<void> {
    this.kv.close();
  }
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 's');
}
