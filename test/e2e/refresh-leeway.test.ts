import { expect } from 'chai';
import * as oidc from 'openid-client';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { Agent } from '../helpers/agent.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('leeway-site');
const other = siteClient('leeway-other');
const LEEWAY = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The token endpoint as a client calls it: the raw answer. */
async function refresh(h: Harness, client: typeof site, refreshToken: string) {
  const res = await fetch(`${h.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
  return { status: res.status, cacheControl: res.headers.get('cache-control'), json: await res.json() as Record<string, string> };
}

describe(`refresh that survives a lost answer (reuse leeway of ${LEEWAY} s)`, () => {
  let h: Harness;
  let config: oidc.Configuration;
  const warnings: string[] = [];

  before(async () => {
    h = await startHarness('leeway', {
      clients: [site, other],
      logger: { info() {}, warn: (m: string) => warnings.push(m), error() {} },
      plugin: { refreshReuseLeeway: LEEWAY },
    });
    config = await discover(h, site);
  });
  after(() => h.close());

  const introspect = async (token: string) => (await oidc.tokenIntrospection(config, token)).active;

  it('within the leeway, the same client presenting the rotated token again gets the same answer again, as often as it asks, and one chain lives on', async () => {
    const { tokens } = await signIn(h, config, new Agent(), 'lw1@example.com');
    const lost = await refresh(h, site, tokens.refresh_token!);
    expect(lost.status).to.equal(200);
    // The answer never reached the client: it tries again with the token it has.
    const again = await refresh(h, site, tokens.refresh_token!);
    expect(again.status).to.equal(200);
    expect(again.json).to.deep.equal(lost.json);
    expect(again.cacheControl).to.equal('no-store');
    expect((await refresh(h, site, tokens.refresh_token!)).json).to.deep.equal(lost.json);
    expect(await introspect(lost.json.access_token!)).to.equal(true);
    // The chain goes on from the answer, and only from it.
    const next = await refresh(h, site, lost.json.refresh_token!);
    expect(next.status).to.equal(200);
    expect(await introspect(next.json.access_token!)).to.equal(true);
    expect(warnings.filter((w) => /reuse detected/.test(w))).to.deep.equal([]);
  });

  it('within the leeway, a rotated token whose new refresh token is gone without a record that its write failed (it was revoked) is a reuse: nothing is issued again', async () => {
    const { tokens } = await signIn(h, config, new Agent(), 'lw6@example.com');
    const first = await refresh(h, site, tokens.refresh_token!);
    expect(first.status).to.equal(200);
    // Gone as a revocation leaves it. (A write that failed is recorded as such: test/cluster/leeway-unwritten.cluster.ts.)
    const { store } = h.reference.plugin;
    await store.del([adapterKeys(store.prefix).record('RefreshToken', first.json.refresh_token!)]);
    const before = warnings.length;
    const retried = await refresh(h, site, tokens.refresh_token!);
    expect({ status: retried.status, error: retried.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(await introspect(first.json.access_token!)).to.equal(false);
    expect(warnings.slice(before)).to.include('refresh token reuse detected: grant revoked');
  });

  it('keeps the answer sealed: what Redis holds for it contains no token', async () => {
    const { tokens } = await signIn(h, config, new Agent(), 'lw2@example.com');
    const since = Date.now();
    const answer = await refresh(h, site, tokens.refresh_token!);
    const { store } = h.reference.plugin;
    // Every answer kept (an earlier test's too, until its leeway ends): none holds a token.
    const kept: { value: string; ttl: number }[] = [];
    for await (const key of store.scan('RefreshToken:*:answer')) kept.push({ value: (await store.get(key)) ?? '', ttl: await store.pttl(key) });
    const elapsed = Date.now() - since;
    expect(kept.length).to.be.above(0);
    for (const token of [answer.json.access_token!, answer.json.refresh_token!, answer.json.id_token!, tokens.refresh_token!]) {
      expect(kept.filter((k) => k.value.includes(token))).to.deep.equal([]);
    }
    // This refresh's answer is the longest-lived, kept for the leeway from its write (after `since`).
    expect(Math.max(...kept.map((k) => k.ttl))).to.be.within(LEEWAY * 1000 - elapsed, LEEWAY * 1000);
  });

  it('within the leeway, once the new token was used, the old one is theft: the chain is revoked', async () => {
    const { tokens } = await signIn(h, config, new Agent(), 'lw3@example.com');
    const second = await refresh(h, site, tokens.refresh_token!);
    const third = await refresh(h, site, second.json.refresh_token!);
    expect(third.status).to.equal(200);
    const before = warnings.length;
    const stolen = await refresh(h, site, tokens.refresh_token!);
    expect({ status: stolen.status, error: stolen.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(await oauthError(oidc.refreshTokenGrant(config, third.json.refresh_token!))).to.equal('invalid_grant');
    expect(await introspect(third.json.access_token!)).to.equal(false);
    expect(warnings.slice(before)).to.include('refresh token reuse detected: grant revoked');
  });

  it('within the leeway, another client presenting the token gets nothing, and the chain is left alone', async () => {
    const { tokens } = await signIn(h, config, new Agent(), 'lw4@example.com');
    const answer = await refresh(h, site, tokens.refresh_token!);
    const foreign = await refresh(h, other, tokens.refresh_token!);
    expect({ status: foreign.status, error: foreign.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(foreign.json).to.not.have.property('access_token');
    expect((await refresh(h, site, answer.json.refresh_token!)).status).to.equal(200);
  });

  it('after the leeway, presenting the rotated token revokes the chain as before', async function () {
    this.timeout(15_000);
    const { tokens } = await signIn(h, config, new Agent(), 'lw5@example.com');
    const second = await refresh(h, site, tokens.refresh_token!);
    expect(second.status).to.equal(200);
    await sleep(LEEWAY * 1000 + 300);
    const late = await refresh(h, site, tokens.refresh_token!);
    expect({ status: late.status, error: late.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(await oauthError(oidc.refreshTokenGrant(config, second.json.refresh_token!))).to.equal('invalid_grant');
    expect(await introspect(second.json.access_token!)).to.equal(false);
  });
});

describe('refresh races and the reuse leeway', () => {
  for (const leeway of [60, 0]) {
    describe(`leeway ${leeway} s`, () => {
      let h: Harness;
      let config: oidc.Configuration;
      before(async () => {
        h = await startHarness('leeway-race', { clients: [site], plugin: { refreshReuseLeeway: leeway } });
        config = await discover(h, site);
      });
      after(() => h.close());

      it(leeway ? '20 concurrent refreshes of one token: one answer for all, and one live refresh token in the grant (the losers’ writes removed)'
        : '20 concurrent refreshes of one token: one winner, 19 invalid_grant, and the chain revoked (a race is theft)', async () => {
        const { tokens } = await signIn(h, config, new Agent(), `race${leeway}@example.com`);
        const results = await Promise.all(Array.from({ length: 20 }, () => refresh(h, site, tokens.refresh_token!)));
        const won = results.filter((r) => r.status === 200);
        if (!leeway) {
          expect(won).to.have.length(1);
          expect(results.filter((r) => r.status === 400).map((r) => r.json.error)).to.deep.equal(Array(19).fill('invalid_grant'));
          expect((await oidc.tokenIntrospection(config, won[0]!.json.access_token!)).active).to.equal(false);
          return;
        }
        expect(won).to.have.length(20);
        expect(new Set(won.map((r) => JSON.stringify(r.json))).size).to.equal(1);
        const { adapter, store } = h.reference.plugin;
        const grantId = (await adapter.factory('AccessToken').find(won[0]!.json.access_token!))!.grantId!;
        const live: string[] = [];
        for (const [key] of await store.zentries(adapterKeys(store.prefix).grantIndex(grantId))) {
          if (!key.includes(':RefreshToken:')) continue;
          const [p, c] = await store.hmget(key, ['p', 'c']);
          if (p !== null && c === null) live.push(key);
        }
        expect(live).to.deep.equal([adapterKeys(store.prefix).record('RefreshToken', won[0]!.json.refresh_token!)]);
      });
    });
  }
});
