import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';

import { MemoryStore, RedisStore, type Store } from '../../src/store/store.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh ioredis client; close it with `quit()`. */
export function redisClient(): Redis {
  return new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 });
}

/** A key prefix nobody else uses, so test files never see each other's keys. */
export function uniquePrefix(name: string): string {
  return `osn-test:${name}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under a prefix (SCAN, never KEYS). */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.del(...keys);
  } while (cursor !== '0');
}

export interface StoreKind {
  name: 'redis' | 'memory';
  make(prefix: string): { store: Store; client?: Redis; done(): Promise<void> };
}

/** The two stores every contract suite runs against. */
export const STORE_KINDS: StoreKind[] = [
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
