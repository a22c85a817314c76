/**
 * Previous store (1): a host's copy of oidc-provider's example Redis adapter
 * (example/adapters/redis.js in its history, until 2025), ported as it is to
 * TypeScript from its behaviour, not from the package's reader: the ioredis
 * client carries the `keyPrefix` (so the grant lists hold key names without
 * it), codes and refresh tokens are hashes `{ payload, consumed }` read back
 * with HGETALL (`consumed` a string of seconds), the rest JSON strings; MULTI
 * for writes; `uid:` and `userCode:` pointers. A client of its own, so that
 * tests count what the previous store is asked.
 */
import { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { REDIS_URL } from '../redis.ts';

const grantable = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const consumable = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export interface HostRedisAdapter {
  /** What the host passes as `adapter` (and then as `previousAdapter`): the class. */
  Adapter: new (name: string) => Adapter;
  /** The host's client (keyPrefix set), for looking at what the store holds. */
  client: Redis;
  /** Calls of find, findByUid and findByUserCode so far. */
  lookups: () => number;
  close(): Promise<void>;
}

export function hostRedisAdapter(keyPrefix: string): HostRedisAdapter {
  // The example's `new Redis(process.env.REDIS_URL, { keyPrefix: 'oidc:' })`; the prefix is the test's.
  const client = new Redis(REDIS_URL, { keyPrefix, maxRetriesPerRequest: 2 });
  let lookups = 0;
  const grantKeyFor = (id: string) => `grant:${id}`;
  const userCodeKeyFor = (userCode: string) => `userCode:${userCode}`;
  const uidKeyFor = (uid: string) => `uid:${uid}`;

  class RedisAdapter implements Adapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const store = consumable.has(this.name) ? { payload: JSON.stringify(payload) } : JSON.stringify(payload);
      const multi = client.multi();
      if (typeof store === 'string') multi.set(key, store);
      else multi.hmset(key, store);
      if (expiresIn) multi.expire(key, expiresIn);
      if (grantable.has(this.name) && payload.grantId) {
        const grantKey = grantKeyFor(payload.grantId);
        multi.rpush(grantKey, key);
        const ttl = await client.ttl(grantKey);
        if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
      }
      if (payload.userCode) {
        multi.set(userCodeKeyFor(payload.userCode), id);
        multi.expire(userCodeKeyFor(payload.userCode), expiresIn);
      }
      if (payload.uid) {
        multi.set(uidKeyFor(payload.uid), id);
        multi.expire(uidKeyFor(payload.uid), expiresIn);
      }
      await multi.exec();
    }

    async find(id: string | null): Promise<AdapterPayload | undefined> {
      lookups += 1;
      return this.#read(id);
    }

    async #read(id: string | null): Promise<AdapterPayload | undefined> {
      if (id === null) return undefined;
      const data = consumable.has(this.name) ? await client.hgetall(this.key(id)) : await client.get(this.key(id));
      if (data === null || (typeof data === 'object' && Object.keys(data).length === 0)) return undefined;
      if (typeof data === 'string') return JSON.parse(data) as AdapterPayload;
      const { payload, ...rest } = data;
      return { ...rest, ...JSON.parse(payload!) as AdapterPayload };
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      lookups += 1;
      return this.#read(await client.get(uidKeyFor(uid)));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      lookups += 1;
      return this.#read(await client.get(userCodeKeyFor(userCode)));
    }

    async destroy(id: string): Promise<void> {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const multi = client.multi();
      const tokens = await client.lrange(grantKeyFor(grantId), 0, -1);
      tokens.forEach((token) => multi.del(token));
      multi.del(grantKeyFor(grantId));
      await multi.exec();
    }

    async consume(id: string): Promise<void> {
      await client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }

    key(id: string): string {
      return `${this.name}:${id}`;
    }
  }

  return { Adapter: RedisAdapter, client, lookups: () => lookups, close: async () => { await client.quit(); } };
}

/**
 * `count` interactions (an hour to live) written in the previous store as
 * the host's adapter writes them, and a listing of them in pages of 50 whose
 * checkpoint is the next index: what the import tests walk.
 */
export async function listedInteractions(before: HostRedisAdapter, name: string, count: number) {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const ids = Array.from({ length: count }, (_, i) => `${name}-${String(i).padStart(4, '0')}`);
  for (const id of ids) await new before.Adapter('Interaction').upsert(id, { kind: 'Interaction', jti: id, exp, iat: exp - 3600 } as never, 3600);
  const records = {
    async *pages(checkpoint?: string) {
      for (let at = Number(checkpoint || 0); at < ids.length; at += 50) yield { records: ids.slice(at, at + 50).map((id) => ({ model: 'Interaction', id })), checkpoint: String(at + 50) };
    },
  };
  return { ids, records };
}
