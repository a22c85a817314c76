import type { Cluster, Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import * as commands from '../../src/store/commands.ts';
import { globLiteral } from '../../src/store/glob.ts';
import { RedisStore } from '../../src/store/store.ts';
import { CREDENTIALS } from '../keys.ts';
import type { PreviousRecordId, RecordSource } from './types.ts';

export interface Layout01Options {
  /** The plugin's keyPrefix (default `osn:`). */
  keyPrefix?: string;
}

/**
 * The plugin's own key layout of 0.1.0 as a previous adapter (read both,
 * write new: docs/upgrading.md). 0.1.0 kept a token or code under its value,
 * `P<Model>:{<value>}`, with the value in the payload (`jti`); from 0.2 it is
 * `P<Model>:{<SHA-256 of the value>}` without it. Every other record (sessions,
 * grants, interactions, the grant indexes and the user code pointers) kept its
 * key, and is found where it is. Read only: the plugin never writes the old
 * layout.
 */
export function layout01Adapter(client: Redis | Cluster, options: Layout01Options = {}): (model: string) => Adapter {
  const store = new RedisStore(client, options.keyPrefix ?? 'osn:');
  const key = (model: string, id: string) => `${store.prefix}${model}:{${id}}`;

  class Layout01Adapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (!CREDENTIALS.has(this.model)) return undefined;
      const [p, c] = await store.hmget(key(this.model, id), ['p', 'c']);
      if (p == null) return undefined;
      const payload = JSON.parse(p) as AdapterPayload;
      // A record of today's layout keeps no jti (its key is a hash): not one of 0.1.0's.
      if (payload.jti !== id) return undefined;
      return c == null ? payload : { ...payload, consumed: Number(c) };
    }

    async findByUid(): Promise<undefined> {
      return undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const [pointer] = await store.hmget(`${store.prefix}DeviceCode:userCode:{${userCode}}`, ['p']);
      return pointer == null ? undefined : this.find(JSON.parse(pointer) as string);
    }

    async destroy(id: string): Promise<void> {
      if (CREDENTIALS.has(this.model)) await store.del([key(this.model, id)]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      // The grant index kept its key: what is left of this model in it goes.
      const members = await store.run(commands.indexTake(), [`${store.prefix}Grant:{${grantId}}:records`], [`${store.prefix}${this.model}:`]) as string[];
      await store.del(members);
    }

    async upsert(): Promise<void> {
      throw new TypeError('oidc-signout-notify: the 0.1.0 layout is read only');
    }

    async consume(): Promise<void> {
      throw new TypeError('oidc-signout-notify: the 0.1.0 layout is read only');
    }
  }

  return (model) => new Layout01Adapter(model);
}

/**
 * The tokens and codes of the 0.1.0 layout under the prefix (SCAN on every
 * master of a Cluster; checkpoint: the master's place and its cursor). Today's
 * hashed keys look alike and are listed too: the adapter's find tells them
 * apart (no jti), and the import counts them as gone.
 */
export function layout01Records(client: Redis | Cluster, options: Layout01Options & { count?: number } = {}): RecordSource {
  const prefix = options.keyPrefix ?? 'osn:';
  const shape = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([A-Za-z]+):\\{([^{}]+)\\}$`);
  const nodes = (): Redis[] => (client.isCluster
    ? (client as Cluster).nodes('master').sort((a, b) => `${a.options.host}:${a.options.port}`.localeCompare(`${b.options.host}:${b.options.port}`))
    : [client as Redis]);
  return {
    async *pages(checkpoint?: string) {
      const masters = nodes();
      const [startNode, startCursor] = (checkpoint ?? '0:0').split(':');
      for (let n = Number(startNode); n < masters.length; n += 1) {
        let cursor = n === Number(startNode) ? startCursor! : '0';
        do {
          const [next, keys] = await masters[n]!.scan(cursor, 'MATCH', `${globLiteral(prefix)}*`, 'COUNT', options.count ?? 1000);
          cursor = next;
          const records: PreviousRecordId[] = [];
          for (const k of keys) {
            const m = shape.exec(k);
            if (m && CREDENTIALS.has(m[1]!)) records.push({ model: m[1]!, id: m[2]! });
          }
          yield { records, checkpoint: cursor === '0' ? `${n + 1}:0` : `${n}:${cursor}` };
        } while (cursor !== '0');
      }
    },
  };
}
