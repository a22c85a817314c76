/**
 * Previous store (3): the plugin's own store as 0.1.0 wrote it (its
 * adapters/store-adapter.ts before the tokens' keys were hashed: git history
 * before 882a0b7), for oidc-provider running on it before the upgrade:
 * `P<Model>:{<id>}` with the payload whole (a token's value as its key and its
 * jti), `PSession:uid:{<uid>}`, `PDeviceCode:userCode:{<code>}`, the grant
 * index and tombstone, the account's grants index. Grants and sessions are
 * where today's plugin reads them; only tokens and codes moved.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import * as commands from '../../../src/store/commands.ts';
import { RedisStore } from '../../../src/store/store.ts';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);

export function oldPluginAdapter(client: Redis | Cluster, prefix: string, clockTolerance = 15, defaultTtl = 14 * 24 * 60 * 60): new (model: string) => Adapter {
  const store = new RedisStore(client, prefix);
  const record = (model: string, id: string) => `${prefix}${model}:{${id}}`;
  const sessionUid = (uid: string) => `${prefix}Session:uid:{${uid}}`;
  const grantIndex = (grantId: string) => `${prefix}Grant:{${grantId}}:records`;
  const tombstone = (grantId: string) => `${prefix}Grant:{${grantId}}:revoked`;
  const ttlMs = (expiresIn: number | undefined) => Math.max(1, Math.round(((expiresIn ?? defaultTtl) + clockTolerance) * 1000));
  const read = async (key: string) => {
    const [p, c] = await store.hmget(key, ['p', 'c']);
    return p == null ? undefined : { ...JSON.parse(p) as AdapterPayload, ...(c != null ? { consumed: Number(c) } : {}) };
  };

  return class OldStoreModelAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = record(this.model, id);
      const ttl = ttlMs(expiresIn);
      const json = JSON.stringify(payload);
      const now = Date.now();
      if (this.model === 'Grant') {
        await store.run(commands.guardedUpsert(), [key, tombstone(id)], [json, ttl]);
        if (payload.accountId && payload.clientId) await store.run(commands.indexAdd(), [`${prefix}account:{${payload.accountId}}:grants:${payload.clientId}`], [id, now + ttl, now]);
        return;
      }
      await store.run(commands.upsert(), [key], [json, ttl]);
      if (this.model === 'Session' && payload.uid) await store.run(commands.upsert(), [sessionUid(payload.uid)], [json, ttl]);
      if (payload.userCode) await store.run(commands.upsert(), [`${prefix}DeviceCode:userCode:{${payload.userCode}}`], [JSON.stringify(id), ttl]);
      if (GRANTABLE.has(this.model) && payload.grantId) await store.run(commands.indexAdd(), [grantIndex(payload.grantId), tombstone(payload.grantId)], [key, now + ttl, now]);
    }

    find(id: string) {
      return read(record(this.model, id));
    }

    findByUid(uid: string) {
      return read(sessionUid(uid));
    }

    async findByUserCode(userCode: string) {
      const [pointer] = await store.hmget(`${prefix}DeviceCode:userCode:{${userCode}}`, ['p']);
      return pointer == null ? undefined : this.find(JSON.parse(pointer) as string);
    }

    async consume(id: string): Promise<void> {
      await store.run(commands.consume(), [record(this.model, id)], [Math.floor(Date.now() / 1000)]);
    }

    async destroy(id: string): Promise<void> {
      const key = record(this.model, id);
      if (this.model === 'Session') {
        const found = await read(key);
        await store.del(found?.uid ? [key, sessionUid(found.uid)] : [key]);
        return;
      }
      await store.del([key]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const members = await store.run(commands.indexTake(), [grantIndex(grantId)], [`${prefix}${this.model}:`]) as string[];
      await store.del(members);
    }
  };
}
