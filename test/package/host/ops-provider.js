// The host's module the operator's command imports (test/package/cli-suite.ts):
// what README's provider.js builds, on a Redis or a Cluster (REDIS_CLUSTER)
// under a key prefix of its own, taking over from oidc-provider's example Redis
// adapter (PREVIOUS_REDIS_URL, PREVIOUS_PREFIX). Its `close` export closes what
// it opened beside the plugin's client: the previous store's. It sends letters
// from the process that attaches it (the default) unless LETTERS_WORKER=off:
// the command must start no worker all the same.
import { Cluster, Redis } from 'ioredis';
import Provider from 'oidc-provider';
import { createSignoutNotify, redisReconnect } from 'oidc-signout-notify';
import { exampleRedisAdapter, exampleRedisRecords } from 'oidc-signout-notify/adopt';

import { clients, cookies, findAccount, interactions, jwks, users } from './your-app.js';

const nodes = (spec) => spec.split(',').map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) }));

export const redis = process.env.REDIS_CLUSTER ? new Cluster(nodes(process.env.REDIS_CLUSTER)) : new Redis(process.env.REDIS_URL, redisReconnect);
const previous = new Redis(process.env.PREVIOUS_REDIS_URL);
const prefix = process.env.PREVIOUS_PREFIX;

export const plugin = createSignoutNotify({
  redis,
  keyPrefix: process.env.HOST_KEY_PREFIX,
  mail: { smtpUrl: process.env.SMTP_URL },
  contacts: async (accountId) => users.byId(accountId),
  letters: { worker: process.env.LETTERS_WORKER !== 'off' },
  previousAdapter: exampleRedisAdapter(previous, { prefix }),
  adoption: { records: exampleRedisRecords(previous, { prefix }) },
});

export const provider = new Provider(process.env.ISSUER, plugin.configure({ clients, jwks, cookies, findAccount, interactions }));
plugin.attach(provider);

export const close = () => previous.quit();
