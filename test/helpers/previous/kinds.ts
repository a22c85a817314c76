/**
 * The three previous stores the adoption tests run over, each with what the
 * host had as `adapter` before the switch, what it passes as `previousAdapter`
 * and `adoption.records` after, and a look at what the store still holds.
 */
import { Redis, type Cluster } from 'ioredis';
import type Provider from 'oidc-provider';
import type { Adapter, KoaContextWithOIDC } from 'oidc-provider';

import { exampleRedisRecords, layout01Adapter, layout01Records, type PreviousAdapter, type RecordSourceInput } from '../../../src/adoption.ts';
import { createConnectedSites } from '../../../src/sites/connected-sites.ts';
import { RedisStore } from '../../../src/store/store.ts';
import { startPostgres, type Postgres } from '../postgres.ts';
import { dropPrefix, REDIS_URL, redisValue, uniquePrefix } from '../redis.ts';
import { hostRedisAdapter } from './example-redis.ts';
import { oldPluginAdapter } from './layout-0-1.ts';
import { hostSqlAdapter } from './sql.ts';

export type PreviousKindName = 'example Redis adapter' | 'example SQL adapter on PostgreSQL' | 'the plugin\'s 0.1.0 key layout';
export const PREVIOUS_KINDS: PreviousKindName[] = ['example Redis adapter', 'example SQL adapter on PostgreSQL', 'the plugin\'s 0.1.0 key layout'];

export interface PreviousStore {
  /** oidc-provider's `adapter` before the switch. */
  before: PreviousAdapter;
  /** `previousAdapter` after it. */
  previousAdapter: PreviousAdapter;
  records: RecordSourceInput;
  /** What the service did beside oidc-provider before the switch (0.1.0: Connected sites at each sign-in). */
  beforeProvider?: (provider: Provider) => void;
  /** The example Redis layout's key prefix (that store only). */
  redisPrefix?: string;
  /** The plugin's key prefix (the 0.1.0 layout shares it with the previous store). */
  pluginPrefix: string;
  /** Lookups the previous store was asked (find, findByUid, findByUserCode). */
  lookups(): number;
  /** Whether the previous store still holds the record. */
  holds(model: string, id: string): Promise<boolean>;
  /** What the previous store holds that names the text (its records, in their keys or values). */
  naming(text: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Counts the lookups of a previous adapter it wraps. */
function counted(previous: PreviousAdapter): { adapter: (model: string) => Adapter; lookups: () => number } {
  let lookups = 0;
  const make = (model: string) => (typeof previous === 'function' && previous.prototype ? new (previous as new (m: string) => Adapter)(model) : (previous as (m: string) => Adapter)(model));
  return {
    lookups: () => lookups,
    adapter: (model) => {
      const inner = make(model);
      return Object.assign(Object.create(inner) as Adapter, {
        find: (id: string) => { lookups += 1; return inner.find(id); },
        findByUid: (uid: string) => { lookups += 1; return inner.findByUid!(uid); },
        findByUserCode: (code: string) => { lookups += 1; return inner.findByUserCode!(code); },
      });
    },
  };
}

export async function previousStore(kind: PreviousKindName, name: string, plugin: Redis | Cluster): Promise<PreviousStore> {
  const pluginPrefix = uniquePrefix(name);
  if (kind === 'example Redis adapter') {
    // The example's store is a single Redis (its MULTI spans slots), beside the plugin's (a Cluster in the Cluster pass).
    const prefix = `${uniquePrefix(`${name}-previous`)}oidc:`;
    const host = hostRedisAdapter(prefix);
    const plain = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    return {
      before: host.Adapter, previousAdapter: host.Adapter, records: exampleRedisRecords(plain, { prefix }), pluginPrefix, redisPrefix: prefix,
      lookups: host.lookups,
      holds: async (model, id) => (await plain.exists(`${prefix}${model}:${id}`)) === 1,
      naming: async (text) => {
        const found: string[] = [];
        for await (const keys of plain.scanStream({ match: `${prefix}*`, count: 500 })) {
          for (const key of keys as string[]) if (key.includes(text) || (await redisValue(plain, key)).includes(text)) found.push(key);
        }
        return found;
      },
      async close() {
        await dropPrefix(plain, prefix);
        await plain.quit();
        await host.close();
      },
    };
  }
  if (kind === 'example SQL adapter on PostgreSQL') {
    const postgres: Postgres = await startPostgres();
    console.log(`      (PostgreSQL: ${postgres.where})`);
    const sql = await hostSqlAdapter(postgres.pool, name);
    return {
      before: sql.Adapter, previousAdapter: sql.Adapter, records: () => sql.list(), pluginPrefix,
      lookups: sql.lookups,
      holds: async (model, id) => (await postgres.pool.query(`select 1 from ${sql.table} where id = $1 and payload like $2`, [id, `%"kind":"${model}"%`])).rowCount === 1,
      naming: async (text) => (await postgres.pool.query<{ id: string }>(`select id from ${sql.table} where id like $1 or payload like $1`, [`%${text}%`])).rows.map((r) => r.id),
      async close() {
        await sql.close();
        await postgres.close();
      },
    };
  }
  // The 0.1.0 layout lives under the plugin's own prefix, in the plugin's own Redis.
  const reader = counted(layout01Adapter(plugin, { keyPrefix: pluginPrefix }));
  const look = layout01Adapter(plugin, { keyPrefix: pluginPrefix });
  // 0.1.0 recorded each sign-in in Connected sites (the same keys today): as its recordSignIns step did.
  const sites = createConnectedSites(new RedisStore(plugin, pluginPrefix));
  const beforeProvider = (provider: Provider) => {
    const succeeded = new WeakSet<object>();
    provider.on('authorization.success', (ctx: KoaContextWithOIDC) => succeeded.add(ctx));
    provider.use(async (ctx, next) => {
      await next();
      if (!succeeded.has(ctx)) return;
      const { session, client, grant } = (ctx as unknown as KoaContextWithOIDC).oidc;
      if (!session?.accountId || !client) return;
      await sites.recordSignIn({ accountId: session.accountId, clientId: client.clientId, sub: session.accountId, scopes: (grant?.getOIDCScope() ?? '').split(' ').filter(Boolean), sid: session.sidFor(client.clientId) });
    });
  };
  return {
    beforeProvider,
    before: oldPluginAdapter(plugin, pluginPrefix), previousAdapter: reader.adapter, records: layout01Records(plugin, { keyPrefix: pluginPrefix }), pluginPrefix,
    lookups: reader.lookups,
    holds: async (model, id) => (await plugin.exists(`${pluginPrefix}${model}:{${id}}`)) === 1,
    naming: async (text) => {
      // Only the old layout's own records: tokens and codes under their value.
      const found: string[] = [];
      for await (const { records } of layout01Records(plugin, { keyPrefix: pluginPrefix }).pages()) {
        for (const { model, id } of records) if (JSON.stringify((await look(model).find(id)) ?? null).includes(text)) found.push(`${model}:${id}`);
      }
      return found;
    },
    close: () => dropPrefix(plugin, pluginPrefix),
  };
}
