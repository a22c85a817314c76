/**
 * The bulk import in a process of its own, as an operator's command runs it
 * (so that a test can SIGKILL it half-way): the plugin on the test's Redis
 * (the Cluster in the Cluster pass), the previous store of oidc-provider's
 * example Redis layout read through the package's own reader, and the
 * service's provider (not listening) for the sites' subjects. Prints each
 * progress report as a line of JSON. Settings from the environment:
 * OSN_PLUGIN_PREFIX, OSN_PREVIOUS_PREFIX, OSN_ISSUER, OSN_CLIENTS (JSON), OSN_PER_SECOND.
 */
import { generateKeyPairSync } from 'node:crypto';

import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
import type { JWK } from 'oidc-provider';

import { exampleRedisAdapter, exampleRedisRecords, importPrevious } from '../../src/adoption.ts';
import { createSignoutNotify } from '../../src/index.ts';
import { REDIS_URL, testRedis } from './redis.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const redis = testRedis();
const previous = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
const prefix = env('OSN_PREVIOUS_PREFIX');
const silent = { info() {}, warn() {}, error() {} };
const plugin = createSignoutNotify({
  redis, keyPrefix: env('OSN_PLUGIN_PREFIX'), contacts: async () => undefined, logger: silent,
  letters: { worker: false },
  previousAdapter: exampleRedisAdapter(previous, { prefix }),
  adoption: { records: exampleRedisRecords(previous, { prefix }) },
});
const key = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' } as JWK;
const provider = new Provider(env('OSN_ISSUER'), plugin.configure({
  clients: JSON.parse(env('OSN_CLIENTS')) as [], jwks: { keys: [key] }, features: { devInteractions: { enabled: false } },
}));
const done = await importPrevious(plugin, {
  provider,
  perSecond: Number(process.env.OSN_PER_SECOND ?? 1000),
  onProgress: (progress) => { process.stdout.write(`${JSON.stringify(progress)}\n`); },
});
process.stdout.write(`${JSON.stringify({ done })}\n`);
await plugin.close();
await previous.quit();
await redis.quit();
