import type { Cluster, Redis } from 'ioredis';

import { asUnavailable, hardenClient, StoreUnavailableError } from './availability.ts';
import { globToRegExp } from './glob.ts';
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
  scan(match?: string): AsyncIterable<string, void, undefined>;
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

/**
 * A key's text before and after its id, for scripts that build keys from a
 * record on a single node (see `singleNode`): the layout stays in the key
 * function alone.
 */
export function keyAround(key: (id: string) => string): [before: string, after: string] {
  return key('\u0000').split('\u0000') as [string, string];
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

  /**
   * Whether a command may be sent now: undefined (yes), an error to fail
   * with at once, or a promise to wait on first.
   */
  protected gate(): undefined | Error | Promise<void> {
    return undefined;
  }

  protected track<T>(commands: number, work: () => Promise<T>): Promise<T> {
    const gate = this.gate();
    if (gate) return gate instanceof Error ? Promise.reject(gate) : gate.then(() => this.track(commands, work));
    this.beforeSend();
    this.commandsSent += commands;
    if (this.#inflight === 0) this.roundTrips += 1;
    this.#inflight += 1;
    // The reaction counts the command settled before the caller's continuation
    // sends its next one, and names an outage as such (503, not 500). One
    // reaction, not finally() and catch(): every promise costs on the hot path.
    return work().then(this.#settled, this.#failed);
  }

  #settled = <T>(value: T): T => {
    this.#inflight -= 1;
    return value;
  };

  #failed = (err: unknown): never => {
    this.#inflight -= 1;
    return asUnavailable(err);
  };
}

export class RedisStore extends CountingStore implements Store {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  readonly client: Redis | Cluster;
  readonly singleNode: boolean;

  /** How long a request waits for Redis (ms) before it is answered 503. */
  readonly timeoutMs: number;
  #wasReady: boolean;
  #firstReady: Promise<void> | undefined;

  constructor(client: Redis | Cluster, prefix: string, options: { timeoutMs?: number } = {}) {
    super();
    this.client = client;
    this.singleNode = !client.isCluster;
    this.prefix = assertPrefix(prefix);
    this.timeoutMs = options.timeoutMs ?? 1500;
    hardenClient(client, this.timeoutMs);
    this.#wasReady = client.status === 'ready';
    if (!this.#wasReady) client.once('ready', () => { this.#wasReady = true; });
  }

  /**
   * Fail fast: once the client has been connected, a command is only sent
   * while it is connected; otherwise the request is answered 503 at once
   * rather than waiting for Redis and having its writes land after its
   * answer. Before the first connection a command waits for it, at most
   * `timeoutMs` (start-up).
   */
  protected override gate(): undefined | Error | Promise<void> {
    const status = this.client.status;
    if (status === 'ready') return undefined;
    if (this.#wasReady || status === 'end') return new StoreUnavailableError(`redis: connection ${status}`);
    // A lazyConnect client connects on its first command; this one waits instead of sending.
    if (status === 'wait') this.client.connect().catch(() => {});
    this.#firstReady ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        this.#firstReady = undefined;
        reject(new StoreUnavailableError('redis: not connected yet'));
      }, this.timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.client.once('ready', onReady);
    });
    return this.#firstReady;
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

  async *scan(match = '*'): AsyncIterable<string, void, undefined> {
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

  async *scan(match = '*'): AsyncIterable<string, void, undefined> {
    const re = globToRegExp(`${this.prefix}${match}`);
    for (const key of this.kv.keys()) if (re.test(key)) yield key;
  }

  async close(): Promise<void> {
    this.kv.close();
  }
}
