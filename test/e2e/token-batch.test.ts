/**
 * The token endpoint's writes are all or nothing: a token request that fails
 * after oidc-provider collected them (here the host's account claims throw
 * while the ID token is built, after the refresh token's consume and the new
 * tokens' saves) consumes nothing and writes nothing, so the same refresh
 * token still works once the fault is gone.
 *
 * They go as one script (token_batch) on a single node and on the embedded
 * store, one script per hash slot on a Cluster; either way twenty refreshes
 * racing with one token give one winner, and (reuse leeway off) the chain
 * dies. Runs on Redis (the Cluster in the Cluster pass) and the embedded store.
 */
import type { Server } from 'node:http';

import type { Middleware } from 'koa';

import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';

import Provider, { type Configuration, type JWK } from 'oidc-provider';

import { Redis } from 'ioredis';

import { adapterKeys, createSignoutNotify, UNAVAILABLE_EVENT, type SignoutNotify } from '../../src/index.ts';
import * as commands from '../../src/store/commands.ts';
import { bracket, processClock } from '../helpers/clock.ts';
import { dropPrefix, REDIS_CLUSTER, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';

const CLIENT = {
  client_id: 'batch-site', client_secret: 'batch-site-secret-0123456789abcdef', redirect_uris: ['https://site.example/cb'],
  grant_types: ['authorization_code', 'refresh_token'],
};
const BASIC = `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`;

/**
 * oidc-provider with the plugin attached and CLIENT, on a free port, with the
 * host's `findAccount`, steps of its own after the plugin's, and a listener
 * for Koa's errors no step handled (Koa prints them when there is none).
 */
async function startHost(
  plugin: SignoutNotify,
  findAccount: Configuration['findAccount'],
  host: { steps?: Middleware[]; onError?: (err: Error) => void } = {},
): Promise<{ provider: Provider; server: Server; base: string }> {
  const key = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' } as JWK;
  const provider = new Provider('http://127.0.0.1', plugin.configure({
    clients: [CLIENT], jwks: { keys: [key] }, features: { devInteractions: { enabled: false } }, findAccount,
  }));
  plugin.attach(provider);
  for (const step of host.steps ?? []) provider.use(step);
  // Koa's own event (oidc-provider's typings list only the provider's).
  if (host.onError) (provider as unknown as { on(event: 'error', listener: (err: Error) => void): void }).on('error', host.onError);
  const server = provider.listen(0, '127.0.0.1') as unknown as Server;
  await new Promise((r) => server.once('listening', r));
  return { provider, server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** A grant of `who` at CLIENT and a refresh token under it, as a sign-in leaves them. */
async function newChain(provider: Provider, who: string): Promise<{ grantId: string; token: string }> {
  const grant = new provider.Grant({ accountId: who, clientId: CLIENT.client_id });
  grant.addOIDCScope('openid offline_access');
  const grantId = await grant.save();
  const token = await new provider.RefreshToken({
    accountId: who, clientId: CLIENT.client_id, grantId, scope: 'openid offline_access', gty: 'authorization_code',
  } as never).save();
  return { grantId, token };
}

const refreshAt = (base: string, token: string) => fetch(`${base}/token`, {
  method: 'POST',
  headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
});

for (const kind of REDIS_CLUSTER ? ['redis cluster'] as const : ['redis', 'embedded'] as const) describe(`token endpoint writes: all or nothing (${kind})`, () => {
  const redis = kind === 'embedded' ? undefined : testRedis();
  const prefix = uniquePrefix('token-batch');
  let plugin: SignoutNotify;
  let provider: Provider;
  let server: Server;
  let base: string;
  let claimsFail = false;
  let hostStepFails = false;
  const unhandled: string[] = [];

  before(async () => {
    plugin = createSignoutNotify({ ...(redis ? { redis } : {}), keyPrefix: prefix, contacts: () => undefined, logger: { info() {}, warn() {}, error() {} }, letters: { worker: false }, refreshReuseLeeway: 0, clockTolerance: 0 });
    ({ provider, server, base } = await startHost(plugin, (_ctx, sub) => ({
      accountId: sub,
      claims: () => {
        if (claimsFail) throw new Error('the account store is down');
        return { sub };
      },
    }), {
      // A host's own step, failing once the provider has answered.
      steps: [async (_ctx, next) => {
        await next();
        if (hostStepFails) throw new Error('a host step failed after the answer was built');
      }],
      onError: (err) => unhandled.push(err.message),
    }));
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await plugin.close();
    if (redis) {
      await dropPrefix(redis, prefix);
      await redis.quit();
    }
  });

  const refresh = (token: string) => refreshAt(base, token);

  it('a refresh that fails after its writes were collected consumes nothing and writes nothing', async () => {
    const { grantId, token } = await newChain(provider, 'batch-person');
    const index = adapterKeys(prefix).grantIndex(grantId);
    const before = await plugin.store.zentries(index);

    claimsFail = true;
    const failed = await refresh(token);
    expect(failed.status).to.equal(500);
    expect((await failed.json() as { error: string }).error).to.equal('server_error');
    const stored = await plugin.adapter.factory('RefreshToken').find(token);
    expect(stored, 'the refresh token is still there').to.not.equal(undefined);
    expect(stored!.consumed, 'and not consumed').to.equal(undefined);
    expect(await plugin.store.zentries(index), 'no new token under the grant').to.deep.equal(before);

    claimsFail = false;
    const retried = await refresh(token);
    expect(retried.status).to.equal(200);
    const answer = await retried.json() as { refresh_token: string; access_token: string };
    expect(answer.refresh_token).to.be.a('string').and.not.equal(token);
  });
  it('a refresh sends its writes as one script on a single node and the embedded store, one per hash slot on a Cluster; the site\'s "last used" goes inside that one script, or beside the writes on a Cluster', async () => {
    const { token } = await newChain(provider, 'batch-figures');
    await plugin.sites.recordSignIn({ accountId: 'batch-figures', clientId: CLIENT.client_id, sub: 'batch-figures', scopes: ['openid'], sessionExpiresAt: Date.now() + 60_000 });
    const { store } = plugin;
    const measure = async (presented: string) => {
      const before = { commands: store.commandsSent, trips: store.roundTrips };
      const res = await refresh(presented);
      expect(res.status).to.equal(200);
      return { cost: { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }, next: (await res.json() as { refresh_token: string }).refresh_token };
    };
    // The token with its session and grant; then the writes (this host's findAccount reads nothing).
    // The first use also writes the site's "last used" (once a minute per person and site).
    // "Last used" is this process's clock (the plugin's), read before and after the refresh.
    const { value: first, before, after } = await bracket(processClock, () => measure(token));
    expect((await plugin.sites.get('batch-figures', CLIENT.client_id))!.lastUsedAt, 'written by the time the answer left').to.be.within(before, after);
    const second = await measure(first.next);
    if (store.singleNode) {
      expect(first.cost).to.deep.equal({ commands: 2, trips: 2 });
      expect(second.cost).to.deep.equal({ commands: 2, trips: 2 });
    } else {
      // Cluster: the token; its grant (another slot); consume, new refresh token + index, new access token + index
      // (a script's first use on a node sends its body once more: the command count is at least 7).
      expect({ atLeast7: second.cost.commands >= 7, trips: second.cost.trips }).to.deep.equal({ atLeast7: true, trips: 3 });
      expect(first.cost.trips).to.equal(3);
    }
  });

  it('a refresh goes through when the person\'s site record cannot be read, and "last used" leaves that record as it is', async () => {
    const { token } = await newChain(provider, 'batch-unreadable');
    const sites = plugin.sites.keys.sites('batch-unreadable');
    await plugin.store.run(commands.hset(), [sites], [CLIENT.client_id, '{not json']);
    const res = await refresh(token);
    expect(res.status).to.equal(200);
    expect((await res.json() as { refresh_token: string }).refresh_token).to.be.a('string').and.not.equal(token);
    // The write beside the batch on a Cluster is not awaited by the answer: a read of the same key comes after it.
    expect(await plugin.store.hmget(sites, [CLIENT.client_id])).to.deep.equal(['{not json']);
    await plugin.store.del([sites]);
  });

  it('a refresh that throws past the provider writes none of its tokens, but the site\'s "last used" still goes', async () => {
    const { token } = await newChain(provider, 'batch-thrown');
    await plugin.sites.recordSignIn({ accountId: 'batch-thrown', clientId: CLIENT.client_id, sub: 'batch-thrown', scopes: ['openid'], sessionExpiresAt: Date.now() + 60_000 });
    hostStepFails = true;
    const failed = await refresh(token).finally(() => { hostStepFails = false; });
    expect(failed.status).to.equal(500);
    expect(unhandled.splice(0)).to.deep.equal(['a host step failed after the answer was built']);
    expect((await plugin.adapter.factory('RefreshToken').find(token))!.consumed, 'not consumed').to.equal(undefined);
    expect((await plugin.sites.get('batch-thrown', CLIENT.client_id))!.lastUsedAt).to.be.a('number');
  });

  it('drops the grant index\'s expired members within eight token batches, and keeps the live ones', async () => {
    const { grantId, token } = await newChain(provider, 'batch-prune');
    const index = adapterKeys(prefix).grantIndex(grantId);
    // A token of this grant that lives one second (no clock tolerance here): its index member outlives it until a batch prunes.
    await plugin.adapter.factory('AccessToken').upsert('short-lived-token-of-batch-prune', { grantId, accountId: 'batch-prune', clientId: CLIENT.client_id }, 1);
    const member = (await plugin.store.zentries(index)).find(([, score]) => score < Date.now() + 2000)![0];
    await new Promise((r) => setTimeout(r, 1100));
    expect((await plugin.store.zentries(index)).map(([m]) => m), 'expired, still indexed').to.include(member);
    let current = token;
    for (let i = 0; i < 8; i += 1) {
      const res = await refresh(current);
      expect(res.status).to.equal(200);
      current = (await res.json() as { refresh_token: string }).refresh_token;
    }
    const left = (await plugin.store.zentries(index)).map(([m]) => m);
    expect(left, 'pruned').to.not.include(member);
    expect(left.length, 'the live tokens stay indexed').to.be.greaterThan(0);
  });

  it('twenty refreshes racing with one token: one winner, the others invalid_grant, and the chain is dead (leeway off)', async () => {
    const { token } = await newChain(provider, 'batch-race');
    const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(token).then(async (r) => ({ status: r.status, body: await r.json() as { refresh_token?: string; error?: string } }))));
    const won = answers.filter((a) => a.status === 200);
    expect(won, JSON.stringify(answers.map((a) => a.status))).to.have.length(1);
    expect(answers.filter((a) => a.status === 400).map((a) => a.body.error)).to.deep.equal(Array(19).fill('invalid_grant'));
    const next = await refresh(won[0]!.body.refresh_token!);
    expect(next.status, 'the winner\'s refresh token died with the chain').to.equal(400);
  });
});

// A Redis of the test's own: its memory limit is lowered, which the shared one must not see.
if (!REDIS_CLUSTER) describe('token endpoint writes refused by Redis (maxmemory reached, noeviction)', () => {
  let owned: OwnedRedis;
  let redis: Redis;
  let plugin: SignoutNotify;
  let provider: Provider;
  let server: Server;
  let base: string;
  const outages: { path: string; reason: string }[] = [];

  before(async () => {
    owned = await startRedisServer(['--maxmemory-policy', 'noeviction']);
    redis = new Redis(owned.url);
    plugin = createSignoutNotify({ redis, keyPrefix: 'oom:', contacts: () => undefined, logger: { info() {}, warn() {}, error() {} }, letters: { worker: false } });
    plugin.on(UNAVAILABLE_EVENT, (event) => outages.push({ path: event.path, reason: event.reason }));
    ({ provider, server, base } = await startHost(plugin, (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) })));
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await plugin.close();
    await redis.quit();
    await owned.close();
  });

  it('answers 503 temporarily_unavailable with Retry-After, gives out no token, consumes nothing; the same token works once Redis has room', async () => {
    const { token } = await newChain(provider, 'oom-person');
    const refresh = () => refreshAt(base, token);
    const keysBefore = await redis.dbsize();

    await redis.config('SET', 'maxmemory', '1');
    const refused = await refresh();
    await redis.config('SET', 'maxmemory', '0');
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('2');
    expect(await refused.json()).to.deep.equal({ error: 'temporarily_unavailable', error_description: 'the service cannot reach its data store right now; try again shortly' });
    expect(outages).to.have.length(1);
    expect(outages[0]!.path).to.equal('/token');
    expect(outages[0]!.reason).to.match(/^token writes failed: .*OOM command not allowed/);
    expect(await redis.dbsize(), 'nothing written').to.equal(keysBefore);
    expect((await plugin.adapter.factory('RefreshToken').find(token))!.consumed, 'not consumed').to.equal(undefined);

    const retried = await refresh();
    expect(retried.status).to.equal(200);
    expect((await retried.json() as { refresh_token: string }).refresh_token).to.be.a('string').and.not.equal(token);
  });
});
