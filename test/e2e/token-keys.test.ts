import { expect } from 'chai';
import type { Redis } from 'ioredis';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('keys-site');

/** Every key name under the prefix and every value it holds, whatever its type. */
async function dump(redis: Redis, prefix: string): Promise<{ names: string[]; values: string[] }> {
  const names: string[] = [];
  const values: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      names.push(key);
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      else if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'zset') values.push(...await redis.zrange(key, '0', '-1'));
      else if (type === 'list') values.push(...await redis.lrange(key, '0', '-1'));
      else if (type === 'set') values.push(...await redis.smembers(key));
      else if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
  } while (cursor !== '0');
  return { names, values };
}

describe('bearer credentials are not readable from Redis (key names and values)', () => {
  let h: Harness;
  let config: oidc.Configuration;

  before(async () => {
    h = await startHarness('token-keys', { clients: [site] });
    config = await discover(h, site);
  });
  after(() => h.close());

  it('after sign-in, code exchange, refresh and introspection, no key name or stored value holds a token or code the client holds; the hot paths keep their round trips', async () => {
    const agent = new Agent();
    const first = await signIn(h, config, agent, 'keys@example.com');
    // A second authorization goes straight through: its code is the one we keep.
    const verifier = oidc.randomPKCECodeVerifier();
    const redirectUri = site.redirect_uris![0]!;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid email', state: 'k1',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(redirectUri));
    const callback = new URL(res.location!);
    const code = callback.searchParams.get('code')!;
    expect(code).to.be.a('string').with.length.above(20);

    const { store } = h.reference.plugin;
    const cost = async (work: () => Promise<unknown>) => {
      const before = { commands: store.commandsSent, trips: store.roundTrips };
      const result = await work();
      return { result, cost: { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips } };
    };
    const exchanged = await cost(() => oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'k1' }));
    expect(exchanged.cost).to.deep.equal({ commands: 3, trips: 3 });
    const second = exchanged.result as oidc.TokenEndpointResponse;
    const refreshed = await cost(() => oidc.refreshTokenGrant(config, second.refresh_token!));
    expect(refreshed.cost).to.deep.equal({ commands: 3, trips: 3 });
    const third = refreshed.result as oidc.TokenEndpointResponse;
    const introspected = await cost(() => oidc.tokenIntrospection(config, third.access_token, { token_type_hint: 'access_token' }));
    expect(introspected.cost).to.deep.equal({ commands: 1, trips: 1 });
    expect(introspected.result).to.include({ active: true, client_id: 'keys-site' });
    expect((await oidc.tokenIntrospection(config, third.refresh_token!)).active).to.equal(true);

    const secrets = [
      first.tokens.access_token, first.tokens.refresh_token!,
      code, second.access_token, second.refresh_token!,
      third.access_token, third.refresh_token!,
    ];
    const { names, values } = await dump(h.redis as Redis, h.prefix);
    expect(names.length).to.be.above(10);
    for (const secret of secrets) {
      expect(names.filter((n) => n.includes(secret)), 'key names').to.deep.equal([]);
      expect(values.filter((v) => v.includes(secret)).length, 'stored values').to.equal(0);
    }
  });
});
