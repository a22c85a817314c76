/**
 * Previous store (2): a host's copy of oidc-provider's example SQL adapter
 * (example/adapters/contributed/knex.js, beside sequelize.js and prisma.ts in
 * its history), ported from its behaviour to plain `pg`: one table of every
 * model's records (id, type, payload JSON, grantId, userCode, uid, expiresAt,
 * consumedAt), keyed by (id, type); a consumed record reads back as
 * `consumed: true`; expired rows stay (only the payload's `exp` says so); a
 * model missing from its list of types fails as knex does on an undefined
 * binding. In a schema of the test's own, dropped afterwards.
 */
import { randomBytes } from 'node:crypto';

import type { Adapter, AdapterPayload } from 'oidc-provider';
import type pg from 'pg';

const types = [
  'Session', 'AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'ClientCredentials', 'Client',
  'InitialAccessToken', 'RegistrationAccessToken', 'Interaction', 'ReplayDetection', 'PushedAuthorizationRequest',
  'Grant', 'BackchannelAuthenticationRequest',
].reduce<Record<string, number>>((map, name, i) => ({ ...map, [name]: i + 1 }), {});

export interface HostSqlAdapter {
  Adapter: new (name: string) => Adapter;
  /** The table, schema-qualified. */
  table: string;
  lookups: () => number;
  /** Every row's model and id (the host's own listing for the import and deleteAccount). */
  list(): AsyncIterable<{ model: string; id: string }>;
  close(): Promise<void>;
}

export async function hostSqlAdapter(pool: pg.Pool, name: string): Promise<HostSqlAdapter> {
  const schema = `osn_adopt_${name.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const table = `${schema}.oidc_payloads`;
  await pool.query(`create schema ${schema}`);
  await pool.query(`create table ${table} (
    id varchar(255) not null, type int not null, payload text, "grantId" varchar(255), "userCode" varchar(255),
    uid varchar(255), "expiresAt" timestamptz, "consumedAt" timestamptz, primary key (id, type))`);
  let lookups = 0;

  class DbAdapter implements Adapter {
    readonly name: string;
    readonly type: number | undefined;

    constructor(modelName: string) {
      this.name = modelName;
      this.type = types[modelName];
    }

    #type(): number {
      if (this.type === undefined) throw new Error('Undefined binding(s) detected when compiling SELECT. Undefined column(s): [type]');
      return this.type;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await pool.query(
        `insert into ${table} (id, type, payload, "grantId", "userCode", uid, "expiresAt") values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (id, type) do update set payload = excluded.payload, "grantId" = excluded."grantId", "userCode" = excluded."userCode", uid = excluded.uid, "expiresAt" = excluded."expiresAt"`,
        [id, this.#type(), JSON.stringify(payload), payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresIn ? new Date(Date.now() + expiresIn * 1000) : null],
      );
    }

    async #findBy(column: 'id' | 'uid' | '"userCode"', value: string): Promise<AdapterPayload | undefined> {
      lookups += 1;
      const { rows } = await pool.query<{ payload: string; consumedAt: Date | null }>(`select payload, "consumedAt" from ${table} where type = $1 and ${column} = $2`, [this.#type(), value]);
      const row = rows[0];
      return row ? { ...JSON.parse(row.payload) as AdapterPayload, ...(row.consumedAt ? { consumed: true } : undefined) } : undefined;
    }

    find(id: string) {
      return this.#findBy('id', id);
    }

    findByUserCode(userCode: string) {
      return this.#findBy('"userCode"', userCode);
    }

    findByUid(uid: string) {
      return this.#findBy('uid', uid);
    }

    async destroy(id: string): Promise<void> {
      await pool.query(`delete from ${table} where type = $1 and id = $2`, [this.#type(), id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query(`delete from ${table} where type = $1 and "grantId" = $2`, [this.#type(), grantId]);
    }

    async consume(id: string): Promise<void> {
      await pool.query(`update ${table} set "consumedAt" = now() where type = $1 and id = $2`, [this.#type(), id]);
    }
  }

  const byType = Object.fromEntries(Object.entries(types).map(([model, type]) => [type, model]));
  return {
    Adapter: DbAdapter,
    table,
    lookups: () => lookups,
    async *list() {
      // Keyset pages, as a host would list a large table.
      let after: [number, string] = [0, ''];
      for (;;) {
        const { rows } = await pool.query<{ id: string; type: number }>(`select id, type from ${table} where (type, id) > ($1, $2) order by type, id limit 500`, after);
        for (const row of rows) yield { model: byType[row.type]!, id: row.id };
        if (rows.length < 500) return;
        after = [rows.at(-1)!.type, rows.at(-1)!.id];
      }
    },
    async close() {
      await pool.query(`drop schema if exists ${schema} cascade`);
    },
  };
}
