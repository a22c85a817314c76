/**
 * The refresh race on an old token (issue 33): 20 requests at once present
 * one refresh token that is still in the previous store (oidc-provider's
 * example Redis adapter). It moves in once, the reuse leeway gives all 20 the
 * same answer, and one chain lives on: one live refresh token in the grant.
 * Repeated on fresh tokens (scale tier: 100 of 100). On the single node, and
 * on the Cluster in the Cluster pass (the previous store stays a single Redis).
 */
import { expect } from 'chai';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { Agent } from '../helpers/agent.ts';
import { authorize, exchange, refresh, startAdoptHost, type AdoptHost } from '../helpers/adopt-host.ts';
import { previousStore, type PreviousStore } from '../helpers/previous/kinds.ts';
import { siteClient } from '../helpers/reference.ts';
import { dropPrefix, testRedis } from '../helpers/redis.ts';
import { scale } from '../helpers/scale.ts';
import { setUp } from '../helpers/set-up.ts';

const site = siteClient('adopt-race');
const RACES = scale(20, 100);

describe(`the refresh race on a token still in the previous store: 20 at once, ${RACES} times`, function () {
  this.timeout(300_000);
  const tokens: string[] = [];

  const world = setUp(async () => {
    const redis = testRedis();
    const previous: PreviousStore = await previousStore('example Redis adapter', 'adopt-race', redis);
    const host: AdoptHost = await startAdoptHost({ clients: [site], before: previous.before, redis, keyPrefix: previous.pluginPrefix });
    for (let i = 0; i < RACES; i += 1) {
      const { code, verifier } = await authorize(host.issuer, new Agent(), site, { loginHint: `race-${i}`, scope: 'openid offline_access', prompt: 'consent' });
      tokens.push((await exchange(host.issuer, site, code!, verifier)).json.refresh_token!);
    }
    await host.switchToPlugin({ previousAdapter: previous.previousAdapter, adoption: { records: previous.records } });
    return {
      redis, previous, host,
      async close() {
        await host.close();
        await previous.close();
        await dropPrefix(redis, previous.pluginPrefix);
        await redis.quit();
      },
    };
  });

  it(`moves each token once and leaves one live chain, ${RACES} of ${RACES}`, async () => {
    const { host, previous } = world();
    const plugin = host.plugin!;
    const keys = adapterKeys(previous.pluginPrefix);
    let passed = 0;
    for (const token of tokens) {
      const movedBefore = plugin.adoption!.counts().moved.RefreshToken ?? 0;
      const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(host.issuer, site, token)));
      expect(answers.map((a) => a.status), JSON.stringify(answers.find((a) => a.status !== 200)?.json)).to.deep.equal(Array(20).fill(200));
      expect(new Set(answers.map((a) => JSON.stringify(a.json))).size, 'one answer for all').to.equal(1);
      expect((plugin.adoption!.counts().moved.RefreshToken ?? 0) - movedBefore, 'moved once').to.equal(1);
      const grantId = (await plugin.adapter.factory('RefreshToken').find(answers[0]!.json.refresh_token!))!.grantId!;
      const live: string[] = [];
      for (const [key] of await plugin.store.zentries(keys.grantIndex(grantId))) {
        if (!key.includes(':RefreshToken:')) continue;
        const [p, c] = await plugin.store.hmget(key, ['p', 'c']);
        if (p !== null && c === null) live.push(key);
      }
      expect(live, 'one live refresh token in the grant').to.deep.equal([keys.record('RefreshToken', answers[0]!.json.refresh_token!)]);
      passed += 1;
    }
    expect(passed).to.equal(RACES);
  });
});
