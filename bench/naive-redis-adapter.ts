/**
 * Peer (C) adapter: the usual first Redis adapter for oidc-provider, shaped
 * like the example in oidc-provider's documentation (example/adapters/redis.js)
 * that most teams start from, written here from its behaviour:
 *
 * - one key per record with a TTL (`EXPIRE`), a hash for the consumable
 *   models (payload + `consumed`), a string for the others;
 * - writes in a MULTI; the grant's record list is a Redis list (RPUSH), never
 *   trimmed, whose TTL is read first (TTL) and raised when the record lives
 *   longer;
 * - consume is a plain `HSET consumed` (no check, so it recreates a deleted
 *   record without a TTL), no tombstones for revoked grants: reuse detection
 *   rests on the provider's own read-then-consume, which is not atomic
 *   (KNOWN-TRAPS item 2).
 *
 * For the benchmark only: it is what A is compared with, not something to use.
 */
import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export function naiveRedisAdapter(client: Redis, prefix: string): (model: string) => Adapter {
  const grantKeyFor = (id: string) => `${prefix}grant:${id}`;
  const userCodeKeyFor = (userCode: string) => `${prefix}userCode:${userCode}`;
  const uidKeyFor = (uid: string) => `${prefix}uid:${uid}`;

  class NaiveRedisAdapter implements Adapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    key(id: string): string {
      return `${prefix}${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const multi = client.multi();
      if (CONSUMABLE.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
      else multi.set(key, JSON.stringify(payload));
      if (expiresIn) multi.expire(key, expiresIn);
      if (GRANTABLE.has(this.name) && payload.grantId) {
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

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (CONSUMABLE.has(this.name)) {
        const data = await client.hgetall(this.key(id));
        if (!data.payload) return undefined;
        const { payload, consumed } = data;
        const parsed = JSON.parse(payload) as AdapterPayload;
        return consumed ? { ...parsed, consumed: Number(consumed) } : parsed;
      }
      const data = await client.get(this.key(id));
      return data ? (JSON.parse(data) as AdapterPayload) : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = await client.get(uidKeyFor(uid));
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const id = await client.get(userCodeKeyFor(userCode));
      return id ? this.find(id) : undefined;
    }

    async destroy(id: string): Promise<void> {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const multi = client.multi();
      const tokens = await client.lrange(grantKeyFor(grantId), 0, -1);
      for (const token of tokens) multi.del(token);
      multi.del(grantKeyFor(grantId));
      await multi.exec();
    }

    async consume(id: string): Promise<void> {
      await client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }
  }

  return (model: string) => new NaiveRedisAdapter(model);
}
