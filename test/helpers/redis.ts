import { randomBytes } from 'node:crypto';

import { Cluster, Redis } from 'ioredis';

import { MemoryStore, RedisStore, type Store } from '../../src/store/store.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The Cluster pass of `npm test` (test/run.ts) sets REDIS_CLUSTER to the
 * nodes of a Cluster it started (`host:port,host:port,...`); the shared
 * suites it runs then use a Cluster client wherever they use "Redis".
 */
export const REDIS_CLUSTER = process.env.REDIS_CLUSTER;

/** A fresh ioredis client; close it with `quit()`. */
export function redisClient(): Redis {
  return new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 });
}

/** A client for a Cluster given as `host:port,host:port,...`. */
export function clusterClient(nodes: string): Cluster {
  return new Cluster(nodes.split(',').map((n) => ({ host: n.split(':')[0]!, port: Number(n.split(':')[1]) })), { redisOptions: { maxRetriesPerRequest: 2 } });
}

/** The Cluster in the Cluster pass, else the single node. */
export function testRedis(): Redis | Cluster {
  return REDIS_CLUSTER ? clusterClient(REDIS_CLUSTER) : redisClient();
}

/** A key prefix nobody else uses, so test files never see each other's keys. */
export function uniquePrefix(name: string): string {
  return `osn-test:${name}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under a prefix (SCAN, never KEYS; on a Cluster, on each master). */
export async function dropPrefix(client: Redis | Cluster, prefix: string): Promise<void> {
  for (const node of client.isCluster ? (client as Cluster).nodes('master') : [client as Redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      // One key per DEL: keys of one node may still live in different slots.
      for (const key of keys) await node.del(key);
    } while (cursor !== '0');
  }
}

export interface StoreKind {
  name: 'redis' | 'memory' | 'redis cluster';
  make(prefix: string): { store: Store; client?: Redis | Cluster; done(): Promise<void> };
}

const CLUSTER_KIND: StoreKind = {
  name: 'redis cluster',
  make(prefix) {
    const client = clusterClient(REDIS_CLUSTER!);
    const store = new RedisStore(client, prefix);
    return { store, client, async done() { await dropPrefix(client, prefix); await client.quit(); } };
  },
};

/** The stores every contract suite runs against: the single node and the embedded store, or in the Cluster pass the Cluster. */
export const STORE_KINDS: StoreKind[] = REDIS_CLUSTER ? [CLUSTER_KIND] : [
  {
    name: 'redis',
    make(prefix) {
      const client = redisClient();
      const store = new RedisStore(client, prefix);
      return { store, client, async done() { await dropPrefix(client, prefix); await client.quit(); } };
    },
  },
  {
    name: 'memory',
    make(prefix) {
      const store = new MemoryStore(prefix);
      return { store, async done() { await store.close(); } };
    },
  },
];

/** Keys under the store's prefix whose TTL is -1 (no expiry). */
export async function keysWithoutTtl(store: Store, except: RegExp[] = []): Promise<string[]> {
  const out: string[] = [];
  for await (const key of store.scan()) {
    if (except.some((re) => re.test(key))) continue;
    if ((await store.pttl(key)) === -1) out.push(key);
  }
  return out;
}

/** Every value a key holds, as text: a string, a hash, a set, a sorted set, a list or a stream. */
export async function redisValue(client: Redis | Cluster, key: string): Promise<string> {
  const type = await client.type(key);
  switch (type) {
    case 'string': return (await client.get(key)) ?? '';
    case 'hash': return JSON.stringify(await client.hgetall(key));
    case 'set': return JSON.stringify(await client.smembers(key));
    case 'zset': return JSON.stringify(await client.zrange(key, '0', '-1'));
    case 'list': return JSON.stringify(await client.lrange(key, 0, -1));
    case 'stream': return JSON.stringify(await client.xrange(key, '-', '+'));
    default: return '';
  }
}

/** The test's Redis (its Cluster in the Cluster pass) under a prefix of its own, for setUp: close() drops the prefix and quits. */
export function redisUnderPrefix(name: string): { redis: Redis | Cluster; prefix: string; close(): Promise<void> } {
  const redis = testRedis();
  const prefix = uniquePrefix(name);
  return { redis, prefix, async close() { await dropPrefix(redis, prefix); await redis.quit(); } };
}
