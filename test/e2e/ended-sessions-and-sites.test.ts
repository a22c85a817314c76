/**
 * Access that was removed stays removed (docs/loss-of-access.md): signing out everywhere ends
 * the sessions but not an offline_access chain; "sign out of the others" among 150 sessions; a site
 * whose access the service ended (endSiteAccess), for the person and for every token of the site.
 * Runs on Redis (the Cluster in the Cluster pass) and the embedded store.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { confidential, endedChainsCalls, KINDS, other, startEndedChains, wholePublic, wholeSite, type Chain } from '../helpers/ended-chains.ts';
import { notifyAs, signIn, type Harness } from '../helpers/reference.ts';
import { scale } from '../helpers/scale.ts';
import { setUp } from '../helpers/set-up.ts';

for (const kind of KINDS) describe(`access that was removed stays removed (${kind})`, () => {
  let h: Harness;

  const world = setUp(() => startEndedChains('ended-sessions-and-sites', kind), (started) => ({ h } = started));
  const { config, refresh, active, newChain, expectEnded, consoleApi } = endedChainsCalls(world, kind);

  it('sign out everywhere leaves an offline_access chain alive; sign-out of the service too', async () => {
    const chain = await newChain(confidential, { offline: true });
    expect(await consoleApi(chain.agent, 'POST', '/sessions/end-all')).to.equal(200);
    const next = await refresh(confidential, chain.rt2);
    expect(next.status, JSON.stringify(next.json)).to.equal(200);
  });

  /** Past the list's 100 (the first session is no longer listed): 101 in `npm test`, 150 in the scale tier. */
  const SESSIONS = scale(101, 150);
  it(`${SESSIONS} sessions of one person, then "sign out of the others" from the newest: the first session is over (its console asks to sign in, its refresh token answers invalid_grant), the newest stays`, async function () {
    this.timeout(180_000);
    const email = `ended-many-${kind.replace(' ', '-')}@example.com`;
    // One at a time: the sign-in code's limits refuse a person's sign-ins in parallel (429).
    const first: Chain = await newChain(confidential, { email });
    const browsers: Agent[] = [first.agent];
    for (let i = 1; i < SESSIONS; i += 1) {
      const agent = new Agent();
      await signIn(h, config(other), agent, email);
      browsers.push(agent);
    }
    const newest = browsers.at(-1)!;
    const listed = await newest.request('GET', `${h.issuer}/console/api/sessions`, undefined, { accept: 'application/json', origin: h.issuer });
    expect((JSON.parse(listed.body) as unknown[]).length, 'the list shows at most 100').to.equal(100);
    expect(await consoleApi(newest, 'POST', '/sessions/end-others')).to.equal(200);

    const consoleAtFirst = await first.agent.get(`${h.issuer}/console`);
    expect(consoleAtFirst.status).to.equal(303);
    expect(consoleAtFirst.location).to.match(new RegExp(`^${h.issuer}/auth\\?`));
    const next = await refresh(confidential, first.rt2);
    expect({ status: next.status, error: next.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(await active(confidential, first.at2)).to.equal(false);
    // Every other but the newest is over too; the newest is still signed in.
    expect((await browsers[Math.floor(SESSIONS / 2)]!.get(`${h.issuer}/console`)).status).to.equal(303);
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
