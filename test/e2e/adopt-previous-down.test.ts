/**
 * A previous store that fails or does not answer (issue 33): a lookup there
 * answers 503 temporarily_unavailable at once (within redisTimeoutMs), as
 * when the plugin's own Redis is gone, never "not found" (a site would drop
 * a live refresh token) and never a hang.
 */
import { expect } from 'chai';
import type { Adapter } from 'oidc-provider';

import { startAdoptHost, type AdoptHost } from '../helpers/adopt-host.ts';
import { hostRedisAdapter } from '../helpers/previous/example-redis.ts';
import { siteClient } from '../helpers/reference.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

const site = siteClient('adopt-down');
const basic = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;

for (const [name, broken] of [
  ['fails', () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6390'))],
  ['does not answer', () => new Promise(() => {})],
] as const) {
  describe(`a previous store that ${name}`, function () {
    this.timeout(30_000);
    const world = setUp(async () => {
      const redis = testRedis();
      const prefix = uniquePrefix('adopt-down');
      const before = hostRedisAdapter(`${prefix}previous:`);
      const host: AdoptHost = await startAdoptHost({ clients: [site], before: before.Adapter, redis, keyPrefix: prefix });
      const down = (model: string): Adapter => Object.assign(new before.Adapter(model), { find: broken, findByUid: broken, findByUserCode: broken });
      await host.switchToPlugin({ previousAdapter: down, redisTimeoutMs: 300 });
      return { host, async close() { await host.close(); await before.close(); await dropPrefix(redis, prefix); await redis.quit(); } };
    });

    it('answers a lookup 503 temporarily_unavailable, within the plugin\'s redisTimeoutMs', async () => {
      const started = Date.now();
      const res = await fetch(`${world().host.issuer}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'an-old-refresh-token-0123456789abcdefghijkl' }),
      });
      expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).to.deep.equal({ status: 503, error: 'temporarily_unavailable' });
      expect(Date.now() - started).to.be.below(3000);
    });
  });
}
