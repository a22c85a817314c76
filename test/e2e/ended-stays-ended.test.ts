/**
 * Access that was removed stays removed (docs/reuse-leeway.md "Refresh that survives a lost
 * answer" and "Loss of access"): after every way a refresh chain ends, the
 * token it replaced, presented again within the reuse leeway, answers
 * invalid_grant, the ended tokens stay dead and no new token is active. For
 * a confidential site (which has the leeway) and a public one (which has
 * none by default). Runs on Redis (the Cluster in the Cluster pass) and the
 * embedded store.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { REDIS_CLUSTER, testRedis } from '../helpers/redis.ts';
import { discover, notifyAs, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { REFRESH_REPLAYED_EVENT, REPLAY_EVENT, type AnswerAgainEvent, type ReplayEvent } from '../../src/index.ts';

const confidential = siteClient('ended-conf');
const publicSite = publicClient('ended-public');
const orgSite = siteClient('ended-org');
const wholeSite = siteClient('ended-whole');
const wholePublic = publicClient('ended-whole-public');
const other = siteClient('ended-other');
const LEEWAY = 30;
const many = { limit: 10_000, windowMs: 15 * 60_000 };

interface Chain {
  agent: Agent;
  email: string;
  site: ClientMetadata;
  /** The refresh token the first refresh replaced. */
  rt1: string;
  rt2: string;
  at2: string;
  idToken: string;
}

for (const kind of REDIS_CLUSTER ? ['redis cluster'] as const : ['redis', 'embedded'] as const) describe(`access that was removed stays removed (${kind})`, () => {
  let h: Harness;
  let n = 0;
  const replays: ReplayEvent[] = [];
  const answeredAgain: AnswerAgainEvent[] = [];
  const configs = new Map<string, oidc.Configuration>();

  before(async () => {
    h = await startHarness(`ended-${kind.replace(' ', '-')}`, {
      clients: [confidential, publicSite, orgSite, wholeSite, wholePublic, other],
      ...(kind === 'embedded' ? { embedded: true } : { client: testRedis() }),
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many, perAddress: many },
      organizations: [{ id: 'ended-org', name: 'Ended Org', admins: ['ended-boss@example.com'], members: Array.from({ length: 10 }, (_, i) => `ended-org${i}@example.com`), clients: ['ended-org'] }],
      plugin: { refreshReuseLeeway: LEEWAY },
    });
    h.reference.plugin.on(REPLAY_EVENT, (e) => replays.push(e));
    h.reference.plugin.on(REFRESH_REPLAYED_EVENT, (e) => answeredAgain.push(e));
    for (const site of [confidential, publicSite, orgSite, wholeSite, wholePublic, other]) configs.set(site.client_id, await discoverSite(h, site));
  });
  after(() => h.close());

  const config = (site: ClientMetadata) => configs.get(site.client_id)!;

  /** The token endpoint as the site calls it: the raw answer. */
  async function refresh(site: ClientMetadata, refreshToken: string) {
    const res = await fetch(`${h.issuer}/token`, {
      method: 'POST',
      headers: { ...clientAuth(site), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, ...(site.client_secret ? {} : { client_id: site.client_id }) }),
    });
    return { status: res.status, json: await res.json() as Record<string, string> };
  }

  /**
   * Whether a token is live, as its site can tell: introspection for a
   * confidential site; a public site cannot authenticate to introspection, so
   * its access token is tried at userinfo and its refresh token is left to
   * the refresh that follows in each check.
   */
  async function active(site: ClientMetadata, token: string): Promise<boolean> {
    if (site.client_secret) return (await oidc.tokenIntrospection(config(site), token)).active;
    const res = await fetch(`${h.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });
    return res.status === 200;
  }

  async function revoke(site: ClientMetadata, token: string) {
    const res = await fetch(`${h.issuer}/token/revocation`, {
      method: 'POST',
      headers: { ...clientAuth(site), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, ...(site.client_secret ? {} : { client_id: site.client_id }) }),
    });
    expect(res.status).to.equal(200);
  }

  /** Signs a new person in at the site and refreshes once: RT1 is replaced by RT2. */
  async function newChain(site: ClientMetadata, opts: { email?: string; offline?: boolean } = {}): Promise<Chain> {
    n += 1;
    const email = opts.email ?? `ended-${kind.replace(' ', '-')}-${n}@example.com`;
    const agent = new Agent();
    const { tokens } = await signIn(h, config(site), agent, email, { scope: opts.offline ? 'openid email offline_access' : 'openid email', ...(opts.offline ? { prompt: 'consent' } : {}) });
    const second = await refresh(site, tokens.refresh_token!);
    expect(second.status, JSON.stringify(second.json)).to.equal(200);
    return { agent, email, site, rt1: tokens.refresh_token!, rt2: second.json.refresh_token!, at2: second.json.access_token!, idToken: tokens.id_token! };
  }

  /** After an ending: the replaced token again within the leeway, refused; the chain's tokens dead; nothing new. */
  async function expectEnded(chain: Chain) {
    const again = await refresh(chain.site, chain.rt1);
    expect({ status: again.status, error: again.json.error }, JSON.stringify(again.json)).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(again.json).to.not.have.property('access_token');
    if (chain.site.client_secret) expect(await active(chain.site, chain.rt2), 'the new refresh token').to.equal(false);
    expect(await active(chain.site, chain.at2), 'the new access token').to.equal(false);
    const next = await refresh(chain.site, chain.rt2);
    expect({ status: next.status, error: next.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    // And again, after the chain is known dead: still nothing.
    expect((await refresh(chain.site, chain.rt1)).status).to.equal(400);
  }

  async function consoleApi(agent: Agent, method: string, path: string) {
    const res = await agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: h.issuer });
    return res.status;
  }

  const accountId = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;

  it('within the leeway the confidential site gets the same answer again, once told as refresh_replayed (no token in the event)', async () => {
    const chain = await newChain(confidential);
    const before = answeredAgain.length;
    const again = await refresh(confidential, chain.rt1);
    expect(again.status).to.equal(200);
    expect(again.json.refresh_token).to.equal(chain.rt2);
    const told = answeredAgain.slice(before);
    expect(told).to.have.length(1);
    expect(told[0]).to.have.keys(['clientId', 'grantId', 'ageSeconds']);
    expect(told[0]!.clientId).to.equal(confidential.client_id);
    expect(told[0]!.ageSeconds).to.be.within(0, LEEWAY);
    expect(JSON.stringify(told[0])).to.not.include(chain.rt1).and.not.include(chain.rt2);
  });

  for (const site of [confidential, publicSite]) {
    const who = site.client_secret ? 'a confidential site' : 'a public site';

    it(`${who}: RFC 7009 revocation of the new refresh token, then the replaced one again`, async () => {
      const chain = await newChain(site);
      await revoke(site, chain.rt2);
      await expectEnded(chain);
    });

    it(`${who}: RFC 7009 revocation of the new access token, then the replaced one again`, async () => {
      const chain = await newChain(site);
      await revoke(site, chain.at2);
      await expectEnded(chain);
    });

    it(`${who}: RFC 7009 revocation of the replaced token itself: it stays dead and nothing new is issued`, async () => {
      const chain = await newChain(site);
      await revoke(site, chain.rt1);
      const again = await refresh(site, chain.rt1);
      expect({ status: again.status, error: again.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
      if (site.client_secret) expect(await active(site, chain.rt1)).to.equal(false);
    });

    it(`${who}: Block site, then the replaced token again`, async () => {
      const chain = await newChain(site);
      expect(await consoleApi(chain.agent, 'POST', `/sites/${site.client_id}/block`)).to.equal(204);
      await expectEnded(chain);
    });

    it(`${who}: Remove access, then the replaced token again`, async () => {
      const chain = await newChain(site);
      expect(await consoleApi(chain.agent, 'POST', `/sites/${site.client_id}/remove-access`)).to.equal(204);
      await expectEnded(chain);
    });

    it(`${who}: sign-out of the service (no offline_access), then the replaced token again`, async () => {
      const chain = await newChain(site);
      const page = await chain.agent.get(`${h.issuer}/session/end`);
      const done = await chain.agent.follow(await chain.agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' }));
      expect(done.url).to.equal(`${h.issuer}/session/end/success`);
      await expectEnded(chain);
    });

    it(`${who}: sign out everywhere, then the replaced token again`, async () => {
      const chain = await newChain(site);
      expect(await consoleApi(chain.agent, 'POST', '/sessions/end-all')).to.equal(200);
      await expectEnded(chain);
    });

    it(`${who}: the service ends the person's access (endAccountAccess), then the replaced token again`, async () => {
      const chain = await newChain(site);
      await h.reference.plugin.endAccountAccess(await accountId(chain.email));
      await expectEnded(chain);
    });

    it(`${who}: theft detected (the new token used, then the replaced one), then the replaced one again`, async () => {
      const chain = await newChain(site);
      const third = await refresh(site, chain.rt2);
      expect(third.status).to.equal(200);
      const reported = replays.length;
      expect((await refresh(site, chain.rt1)).status).to.equal(400);
      expect(replays.length - reported, 'the reuse reported once').to.equal(1);
      await expectEnded(chain);
      expect(await active(site, third.json.access_token!)).to.equal(false);
      expect((await refresh(site, third.json.refresh_token!)).status).to.equal(400);
      expect(replays.length - reported, 'and only once').to.equal(1);
    });
  }

  it('a public site: its replaced token presented again is theft at once (no leeway by default): invalid_grant, the chain dead, the reuse reported', async () => {
    const chain = await newChain(publicSite);
    const reported = replays.length;
    const again = await refresh(publicSite, chain.rt1);
    expect({ status: again.status, error: again.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(replays.length - reported).to.equal(1);
    expect(replays.at(-1)).to.include({ model: 'RefreshToken', clientId: publicSite.client_id });
    expect(await active(publicSite, chain.at2)).to.equal(false);
    expect((await refresh(publicSite, chain.rt2)).status).to.equal(400);
  });

  it('an organization removes the member, then the replaced token again', async () => {
    const chain = await newChain(orgSite, { email: 'ended-org1@example.com' });
    expect(await h.reference.plugin.removeMember('ended-org', await accountId(chain.email))).to.equal('removed');
    await expectEnded(chain);
  });

  it('sign out everywhere leaves an offline_access chain alive; sign-out of the service too', async () => {
    const chain = await newChain(confidential, { offline: true });
    expect(await consoleApi(chain.agent, 'POST', '/sessions/end-all')).to.equal(200);
    const next = await refresh(confidential, chain.rt2);
    expect(next.status, JSON.stringify(next.json)).to.equal(200);
  });

  it('150 sessions of one person, then "sign out of the others" from the newest: the first session is over (its console asks to sign in, its refresh token answers invalid_grant), the newest stays', async function () {
    this.timeout(180_000);
    const email = `ended-many-${kind.replace(' ', '-')}@example.com`;
    const browsers: Agent[] = [];
    let first: Chain | undefined;
    for (let i = 0; i < 150; i += 1) {
      if (i === 0) {
        first = await newChain(confidential, { email });
        browsers.push(first.agent);
        continue;
      }
      const agent = new Agent();
      await signIn(h, config(other), agent, email);
      browsers.push(agent);
    }
    const newest = browsers.at(-1)!;
    const listed = await newest.request('GET', `${h.issuer}/console/api/sessions`, undefined, { accept: 'application/json', origin: h.issuer });
    expect((JSON.parse(listed.body) as unknown[]).length, 'the list shows at most 100').to.equal(100);
    expect(await consoleApi(newest, 'POST', '/sessions/end-others')).to.equal(200);

    const consoleAtFirst = await first!.agent.get(`${h.issuer}/console`);
    expect(consoleAtFirst.status).to.equal(303);
    expect(consoleAtFirst.location).to.match(new RegExp(`^${h.issuer}/auth\\?`));
    const next = await refresh(confidential, first!.rt2);
    expect({ status: next.status, error: next.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(await active(confidential, first!.at2)).to.equal(false);
    // Every other but the newest is over too; the newest is still signed in.
    expect((await browsers[75]!.get(`${h.issuer}/console`)).status).to.equal(303);
    expect((await newest.get(`${h.issuer}/console`)).status).to.equal(200);
  });

  it('a site the service ended: the person\'s console says so, it may not write to them (not_connected), and their next sign-in there asks for consent again', async () => {
    const chain = await newChain(wholeSite);
    const sub = (await oidc.tokenIntrospection(config(wholeSite), chain.at2)).sub!;
    await h.reference.plugin.endSiteAccess(wholeSite.client_id);
    const sites = JSON.parse((await chain.agent.request('GET', `${h.issuer}/console/api/sites`, undefined, { accept: 'application/json', origin: h.issuer })).body) as { clientId: string; status: string; endedByServiceAt?: string }[];
    const ended = sites.find((s) => s.clientId === wholeSite.client_id)!;
    expect(ended.status).to.equal('access_removed');
    expect(Date.parse(ended.endedByServiceAt!)).to.be.closeTo(Date.now(), 5000);
    const page = await chain.agent.get(`${h.issuer}/console`);
    expect(page.body).to.include('The service ended its access on');
    expect(await notifyAs(h, wholeSite, { sub, category: 'transactional', title: 'Hello', body: 'Hi' })).to.deep.equal({ status: 403, body: { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' } });
    // At once, most often in the ending's own second: a grant written after the ending lives.
    const { pages } = await signIn(h, config(wholeSite), chain.agent, chain.email);
    expect(pages.some((p) => p.body.includes('/confirm"')), 'asked for consent again').to.equal(true);
    expect((await notifyAs(h, wholeSite, { sub, category: 'transactional', title: 'Hello', body: 'Hi' })).status).to.equal(202);
  });

  it('the service ends a site\'s access for everyone (endSiteAccess): every token of that site, the leeway included, is dead; other sites untouched', async () => {
    const chains = [await newChain(wholeSite), await newChain(wholeSite), await newChain(wholePublic)];
    const untouched = await newChain(other);
    const at = await h.reference.plugin.endSiteAccess(wholeSite.client_id);
    expect(at).to.be.closeTo(Date.now(), 2000);
    await h.reference.plugin.endSiteAccess(wholePublic.client_id);
    for (const chain of chains) await expectEnded(chain);
    const next = await refresh(other, untouched.rt2);
    expect(next.status).to.equal(200);
    expect(await active(other, next.json.access_token!)).to.equal(true);
  });
});

async function discoverSite(h: Harness, site: ClientMetadata): Promise<oidc.Configuration> {
  if (site.client_secret) return discover(h, site);
  return oidc.discovery(new URL(h.issuer), site.client_id, { token_endpoint_auth_method: 'none' }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
}

/** A public site (a mobile or browser app): no secret, PKCE. */
function publicClient(clientId: string): ClientMetadata {
  const { client_secret: _secret, ...site } = siteClient(clientId, { token_endpoint_auth_method: 'none' });
  return site;
}

function clientAuth(site: ClientMetadata): Record<string, string> {
  return site.client_secret ? { authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}` } : {};
}
