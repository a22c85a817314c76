/**
 * A host's module for the operator's command run from the sources
 * (test/e2e/command-exits.test.ts), configured by the environment: the
 * plugin on OSN_CMD_REDIS under OSN_CMD_PREFIX, taking over from the example
 * Redis layout under OSN_CMD_PREVIOUS; OSN_CMD_CASE makes it one a host gets
 * wrong or a store that fails: `throws` (the module throws while loading),
 * `no-plugin`, `embedded` (no redis option), `previous-down` (every lookup
 * in the previous store fails). OSN_CMD_PAGE: the listing's SCAN count.
 * OSN_CMD_PREVIOUS_REDIS: the previous store's own Redis (a database of its
 * own, as a host's old adapter often has), else OSN_CMD_REDIS.
 */
import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
import type { Adapter } from 'oidc-provider';

import { exampleRedisAdapter, exampleRedisRecords } from '../../src/adoption.ts';
import { createSignoutNotify } from '../../src/index.ts';

const env = process.env;
if (env.OSN_CMD_CASE === 'throws') throw new Error('the host module could not read its settings');

const previous = new Redis(env.OSN_CMD_PREVIOUS_REDIS ?? env.OSN_CMD_REDIS!, { maxRetriesPerRequest: 1 });
const prefix = env.OSN_CMD_PREVIOUS!;
const reader = exampleRedisAdapter(previous, { prefix });
const down = (model: string): Adapter => Object.assign(reader(model), { find: async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:1'); } });

export const redis = env.OSN_CMD_CASE === 'embedded' ? undefined : new Redis(env.OSN_CMD_REDIS!, { maxRetriesPerRequest: 1 });
const made = createSignoutNotify({
  ...(redis ? { redis } : {}), keyPrefix: env.OSN_CMD_PREFIX, contacts: async () => undefined,
  previousAdapter: env.OSN_CMD_CASE === 'previous-down' ? down : reader,
  adoption: { records: exampleRedisRecords(previous, { prefix, count: Number(env.OSN_CMD_PAGE ?? 1000) }) },
});
export const plugin = env.OSN_CMD_CASE === 'no-plugin' ? undefined : made;
export const provider = new Provider('http://127.0.0.1:9', made.configure({ clients: [], features: { devInteractions: { enabled: false } } }));
made.attach(provider);
export const close = () => previous.quit();
