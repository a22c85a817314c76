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

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  readonly client: Redis | Cluster;
  commandsSent = 0;

  constructor(client: Redis | Cluster, prefix: string) {
    this.client = client;
    this.prefix = assertPrefix(prefix);
  }

  async run(script: Script, keys: string[], argv: (string | number)[]): Promise<ScriptReply> {
    this.commandsSent += 1;
    try {
      return (await this.client.evalsha(script.sha, keys.length, ...keys, ...argv)) as ScriptReply;
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      // First use on this node (or after SCRIPT FLUSH / failover): send the body once.
      this.commandsSent += 1;
      return (await this.client.eval(script.lua, keys.length, ...keys, ...argv)) as ScriptReply;
    }
  }

  get(key: string) {
    this.commandsSent += 1;
    return this.client.get(key);
  }

  hmget(key: string, fields: string[]) {
    this.commandsSent += 1;
    return this.client.hmget(key, ...fields);
  }

  hgetall(key: string) {
    this.commandsSent += 1;
    return this.client.hgetall(key);
  }

  async zentries(key: string): Promise<[string, number][]> {
    this.commandsSent += 1;
    const flat = await this.client.zrange(key, "0", "-1", "WITHSCORES");
    const out: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
    return out;
  }

  pttl(key: string) {
    this.commandsSent += 1;
    return this.client.pttl(key);
  }

  async del(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.commandsSent += keys.length;
    await Promise.all(keys.map((key) => this.client.del(key)));
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

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly prefix: string;
  readonly kv: MemoryKV;
  commandsSent = 0;

  constructor(prefix: string, kv = new MemoryKV()) {
    this.prefix = assertPrefix(prefix);
    this.kv = kv;
  }

  async run(script: Script, keys: string[], argv: (string | number)[]): Promise<ScriptReply> {
    this.commandsSent += 1;
    return script.memory(this.kv, keys, argv.map(String));
  }

  async get(key: string) {
    this.commandsSent += 1;
    return this.kv.get(key);
  }

  async hmget(key: string, fields: string[]) {
    this.commandsSent += 1;
    return this.kv.hmget(key, fields);
  }

  async hgetall(key: string) {
    this.commandsSent += 1;
    return this.kv.hgetall(key);
  }

  async zentries(key: string) {
    this.commandsSent += 1;
    return this.kv.zentries(key);
  }

  async pttl(key: string) {
    this.commandsSent += 1;
    return this.kv.pttl(key);
  }

  async del(keys: string[]) {
    this.commandsSent += keys.length;
    this.kv.del(...keys);
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
