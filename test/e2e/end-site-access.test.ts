/**
 * The operator ends a site's access for everyone (plugin.endSiteAccess: its
 * secret leaked, or it was compromised): one write whatever the number of
 * grants, then every token of the site is dead, the reuse leeway included,
 * and other sites are untouched. 10,000 grants across 1,000 people in the
 * scale tier, 300 across 30 in `npm test` (test/helpers/scale.ts), made
 * through oidc-provider's own models as a host's provider makes them (a
 * browser sign-in 10,000 times would take the suite's whole budget); every
 * check goes through HTTP.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import type { Cluster } from 'ioredis';

import { Agent } from '../helpers/agent.ts';
import { endBefore } from '../../src/store/commands.ts';
import { REDIS_CLUSTER, testRedis } from '../helpers/redis.ts';
import { scale } from '../helpers/scale.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('whole-site');
const other = siteClient('whole-other');
const GRANTS = scale(300, 10_000);
const PEOPLE = scale(30, 1_000);

/** Runs `work(i)` for i < count, `lanes` at a time. */
async function inLanes<T>(count: number, lanes: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await work(i);
    }
  }));
  return out;
}

for (const kind of REDIS_CLUSTER ? ['redis cluster'] as const : ['redis', 'embedded'] as const) describe(`endSiteAccess: ${GRANTS.toLocaleString('en')} grants of one site across ${PEOPLE.toLocaleString('en')} people (${kind})`, function () {
  this.timeout(240_000);
  let h: Harness;
  let siteConfig: oidc.Configuration;
  let otherConfig: oidc.Configuration;
  const minted: { access: string; refresh: string }[] = [];
  const untouched: { access: string; refresh: string }[] = [];

  /** A grant with an access and a refresh token, as a sign-in with offline_access leaves them. */
  async function mint(client: ClientMetadata, accountId: string) {
    const { provider } = h.reference;
    const found = (await provider.Client.find(client.client_id))!;
    const grant = new provider.Grant({ accountId, clientId: found.clientId });
    grant.addOIDCScope('openid email offline_access');
    const grantId = await grant.save();
    const common = { accountId, client: found, grantId, scope: 'openid email offline_access', gty: 'authorization_code' };
    const access = await new provider.AccessToken(common).save();
    const refresh = await new provider.RefreshToken({ ...common, authTime: Math.floor(Date.now() / 1000), rotations: 0 }).save();
    return { access, refresh };
  }

  before(async () => {
    h = await startHarness(`whole-${kind.replace(' ', '-')}`, {
      clients: [site, other],
      ...(kind === 'embedded' ? { embedded: true } : { client: testRedis() }),
      plugin: { refreshReuseLeeway: 60 },
    });
    siteConfig = await discover(h, site);
    otherConfig = await discover(h, other);
    const people = await inLanes(PEOPLE, 32, async (i) => (await h.reference.accounts.findOrCreate(`whole-person-${i}@example.com`)).accountId);
    minted.push(...await inLanes(GRANTS, 32, (i) => mint(site, people[i % PEOPLE]!)));
    untouched.push(...await inLanes(scale(10, 50), 8, (i) => mint(other, people[i]!)));
  });
  after(() => h.close());

  const refresh = async (config: oidc.Configuration, client: ClientMetadata, token: string) => {
    const res = await fetch(new URL('/token', h.issuer), {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
    });
    return { status: res.status, json: await res.json() as Record<string, string> };
  };

  it('is one write, whatever the number of grants; then every token of the site is dead, the leeway included, and the other site\'s are not', async () => {
    // A chain in use at the site, its first rotation within the leeway.
    const { tokens } = await signIn(h, siteConfig, new Agent(), 'whole-live@example.com');
    const rotated = await refresh(siteConfig, site, tokens.refresh_token!);
    expect(rotated.status).to.equal(200);
    expect((await oidc.tokenIntrospection(siteConfig, minted[0]!.access)).active, 'live before').to.equal(true);

    const { store } = h.reference.plugin;
    // A Cluster node runs a script's body once on its first use there (EVALSHA, then EVAL): loaded ahead, so one command is one.
    if (h.redis?.isCluster) for (const node of (h.redis as Cluster).nodes('master')) await node.script('LOAD', endBefore().lua);
    const [commands, trips] = [store.commandsSent, store.roundTrips];
    await h.reference.plugin.endSiteAccess(site.client_id);
    // One command (a round trip may overlap a background write's, which then counts it).
    expect(store.commandsSent - commands, 'commands').to.equal(1);
    expect(store.roundTrips - trips, 'round trips').to.be.at.most(1);

    const introspected = await inLanes(minted.length, 16, async (i) => {
      const [access, refreshToken] = await Promise.all([
        oidc.tokenIntrospection(siteConfig, minted[i]!.access),
        oidc.tokenIntrospection(siteConfig, minted[i]!.refresh),
      ]);
      return access.active || refreshToken.active ? 1 : 0;
    });
    expect(introspected.reduce((a: number, b) => a + b, 0), 'tokens of the site still active').to.equal(0);
    const refreshed = await inLanes(minted.length, 16, async (i) => {
      const r = await refresh(siteConfig, site, minted[i]!.refresh);
      return r.status === 400 && r.json.error === 'invalid_grant' ? 0 : 1;
    });
    expect(refreshed.reduce((a: number, b) => a + b, 0), 'refreshes of the site not invalid_grant').to.equal(0);
    for (const token of [tokens.refresh_token!, rotated.json.refresh_token!]) {
      expect((await refresh(siteConfig, site, token)).json.error, 'the chain in use, the leeway included').to.equal('invalid_grant');
    }
    for (const token of untouched) {
      expect((await oidc.tokenIntrospection(otherConfig, token.access)).active).to.equal(true);
      expect((await refresh(otherConfig, other, token.refresh)).status).to.equal(200);
    }
  });
});
