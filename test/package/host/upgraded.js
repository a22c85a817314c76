// The host after an upgrade from 0.1.0 (docs/upgrading.md, "The plugin's own
// upgrades never sign anyone out"): the same app, the plugin reading 0.1.0's
// key layout through previousAdapter. Its own key prefix on the test's
// database, which the test filled as 0.1.0 wrote it before starting this.
import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
import { createSignoutNotify } from 'oidc-signout-notify';
import { layout01Adapter, layout01Records } from 'oidc-signout-notify/adopt';

import { clients, cookies, findAccount, interactions, jwks, users } from './your-app.js';

const redis = new Redis(process.env.REDIS_URL);
const keyPrefix = process.env.HOST_KEY_PREFIX;
const plugin = createSignoutNotify({
  redis, keyPrefix,
  mail: { smtpUrl: process.env.SMTP_URL },
  contacts: async (accountId) => users.byId(accountId),
  letters: { worker: false },
  previousAdapter: layout01Adapter(redis, { keyPrefix }),
  adoption: { records: layout01Records(redis, { keyPrefix }) },
});
const provider = new Provider(process.env.ISSUER, plugin.configure({ clients, jwks, cookies, findAccount, interactions }));
plugin.attach(provider);

const server = provider.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${process.version}`));
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  plugin.close().then(() => redis.quit());
});
