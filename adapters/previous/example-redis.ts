import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { globLiteral } from '../../src/store/glob.ts';
import { MODELS, type PreviousRecordId, type RecordSource } from './types.ts';

/** Models whose records the example lists under their grant. */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
/** Models the example keeps as a hash { payload, consumed }; the others as a JSON string. */
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export interface ExampleRedisOptions {
  /** The prefix of every key (the example's ioredis `keyPrefix`; default `oidc:`). Give a client without a keyPrefix of its own. */
  prefix?: string;
}

/**
 * oidc-provider's example Redis adapter (example/adapters/redis.js in its
 * history), as most teams copied it: `<prefix><Model>:<id>` holding the
 * payload (a hash `{ payload, consumed }` for codes and refresh tokens, a JSON
 * string otherwise) with a TTL; `<prefix>grant:<grantId>` a list of the
 * grant's record keys (without the prefix, as ioredis' keyPrefix leaves values
 * alone); `<prefix>uid:<uid>` a session's id; `<prefix>userCode:<code>` a
 * device code's id. For `previousAdapter` when the host no longer has its copy
 * (the reference provider's PREVIOUS_REDIS_URL).
 */
export function exampleRedisAdapter(client: Redis, options: ExampleRedisOptions = {}): (model: string) => Adapter {
  const prefix = options.prefix ?? 'oidc:';
  const grantKey = (id: string) => `${prefix}grant:${id}`;
  const userCodeKey = (code: string) => `${prefix}userCode:${code}`;
  const uidKey = (uid: string) => `${prefix}uid:${uid}`;

  class ExampleRedisAdapter implements Adapter {
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
        multi.rpush(grantKey(payload.grantId), `${this.name}:${id}`);
        if (expiresIn > await client.ttl(grantKey(payload.grantId))) multi.expire(grantKey(payload.grantId), expiresIn);
      }
      for (const pointer of [payload.userCode && userCodeKey(payload.userCode), payload.uid && uidKey(payload.uid)]) {
        if (!pointer) continue;
        multi.set(pointer, id);
        if (expiresIn) multi.expire(pointer, expiresIn);
      }
      await multi.exec();
    }

    async find(id: string | null): Promise<AdapterPayload | undefined> {
      if (!id) return undefined;
      if (CONSUMABLE.has(this.name)) {
        const { payload, ...rest } = await client.hgetall(this.key(id));
        return payload ? { ...rest, ...JSON.parse(payload) as AdapterPayload } : undefined;
      }
      const data = await client.get(this.key(id));
      return data ? JSON.parse(data) as AdapterPayload : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.find(await client.get(uidKey(uid)));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.find(await client.get(userCodeKey(userCode)));
    }

    async destroy(id: string): Promise<void> {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const members = await client.lrange(grantKey(grantId), 0, -1);
      const multi = client.multi();
      // A copy that wrote whole key names in the list (no keyPrefix) is read as well.
      for (const member of members) multi.del(member.startsWith(prefix) ? member : `${prefix}${member}`);
      multi.del(grantKey(grantId));
      await multi.exec();
    }

    async consume(id: string): Promise<void> {
      await client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }
  }

  return (model) => new ExampleRedisAdapter(model);
}

/** The record a key of the example's layout names, if it names one (grant lists and pointers do not). */
function recordOf(key: string, prefix: string): PreviousRecordId | undefined {
  const rest = key.slice(prefix.length);
  const colon = rest.indexOf(':');
  const model = rest.slice(0, colon);
  return colon > 0 && MODELS.has(model) ? { model, id: rest.slice(colon + 1) } : undefined;
}

/**
 * Every record of the example's layout in `client` (SCAN MATCH `<prefix>*`,
 * never KEYS), a SCAN reply per page, its cursor as the checkpoint: an import
 * cut short resumes at the cursor it recorded (SCAN returns every key present
 * throughout at least once).
 */
export function exampleRedisRecords(client: Redis, options: ExampleRedisOptions & { count?: number } = {}): RecordSource {
  const prefix = options.prefix ?? 'oidc:';
  const match = `${globLiteral(prefix)}*`;
  const count = options.count ?? 1000;
  return {
    async *pages(checkpoint?: string) {
      if (checkpoint === 'end') return;
      let cursor = checkpoint ?? '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', count);
        cursor = next;
        yield { records: keys.map((key) => recordOf(key, prefix)).filter((r): r is PreviousRecordId => r !== undefined), checkpoint: cursor === '0' ? 'end' : cursor };
      } while (cursor !== '0');
    },
    async count() {
      let n = 0;
      for await (const { records } of this.pages()) n += records.length;
      return n;
    },
  };
}
