/**
 * The reference provider started over an existing store of oidc-provider's
 * example Redis adapter (PREVIOUS_REDIS_URL, PREVIOUS_KEY_PREFIX;
 * docs/reference-provider.md): a token oidc-provider saved there before
 * introspects active at the reference provider and moves into its store.
 */
import { expect } from 'chai';
import Provider from 'oidc-provider';

import { CLIENT, hostConfiguration, hostKeys } from '../../bench/host.ts';
import { createMinter } from '../../bench/mint.ts';
import { introspect } from '../helpers/adopt-host.ts';
import { startInstance, type Instance } from '../helpers/instance.ts';
import { hostRedisAdapter } from '../helpers/previous/example-redis.ts';
import { dropPrefix, REDIS_URL, redisClient, uniquePrefix } from '../helpers/redis.ts';

describe('the reference provider over a store of the example Redis adapter (PREVIOUS_REDIS_URL)', function () {
  this.timeout(60_000);
  const redis = redisClient();
  const pluginPrefix = uniquePrefix('adopt-reference');
  const previousPrefix = `${uniquePrefix('adopt-reference-previous')}oidc:`;
  const host = hostRedisAdapter(previousPrefix);
  let instance: Instance | undefined;

  after(async () => {
    await instance?.stop();
    await host.close();
    await dropPrefix(redis, pluginPrefix);
    await dropPrefix(redis, previousPrefix);
    await redis.quit();
  });

  it('introspects a token the previous store holds as active, and moves it', async () => {
    // The team's provider before: the bench's host configuration, on the example adapter.
    const before = new Provider('http://127.0.0.1:9', { ...hostConfiguration({ ...(await hostKeys()), port: 9 }, new Map()), adapter: host.Adapter });
    const [token] = await (await createMinter(before, ['previous-person'])).mint('access', 1);
    instance = await startInstance({
      clients: [CLIENT],
      env: { REDIS_URL, KEY_PREFIX: pluginPrefix, PREVIOUS_REDIS_URL: REDIS_URL, PREVIOUS_KEY_PREFIX: previousPrefix },
    });
    expect(await introspect(instance.url, CLIENT, token!)).to.deep.include({ active: true, sub: 'previous-person', client_id: CLIENT.client_id });
    expect(await introspect(instance.url, CLIENT, `${token!}x`)).to.deep.equal({ active: false });
    const deadline = Date.now() + 10_000;
    while ((await host.client.exists(`AccessToken:${token!}`)) === 1) {
      if (Date.now() > deadline) throw new Error('the previous copy was not removed');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await introspect(instance.url, CLIENT, token!)).to.deep.include({ active: true });
  });
});
