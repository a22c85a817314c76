/**
 * The holes the refresh chain's model found (test/e2e/refresh-chain-model.test.ts),
 * each its shrunk counterexample as a plain test, with the default reuse
 * leeway (60 s: every retry here is well within it, no clock involved).
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';

import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';
import { Agent } from '../helpers/agent.ts';
import { REDIS_CLUSTER } from '../helpers/redis.ts';
import { signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { asSite, consoleApi, discoverSite, publicSiteClient, type SiteCalls } from '../helpers/site.ts';

const conf = siteClient('finding-conf');
const pub = publicSiteClient('finding-pub');

for (const embedded of REDIS_CLUSTER ? [false] : [false, true]) {
  describe(`the refresh chain's holes the model found (${embedded ? 'embedded' : REDIS_CLUSTER ? 'Redis Cluster' : 'Redis'})`, () => {
    let h: Harness;
    const events: ReplayEvent[] = [];
    let person = 0;

    before(async () => {
      h = await startHarness('chain-findings', { clients: [conf, pub], embedded });
      h.reference.plugin.on(REPLAY_EVENT, (e) => { events.push(e); });
    });
    after(() => h.close());

    /** A chain at the site: the sign-in's tokens, then one refresh whose answer the site got. */
    async function chain(client: ClientMetadata) {
      person += 1;
      const site = asSite(h, client);
      const { tokens } = await signIn(h, await discoverSite(h, client), new Agent(), `finding-${person}@example.com`);
      const rotated = await site.refresh(tokens.refresh_token!);
      expect(rotated.status, rotated.text).to.equal(200);
      return { site, rt0: tokens.refresh_token!, at0: tokens.access_token, rt1: rotated.json.refresh_token!, at1: rotated.json.access_token! };
    }

    /** A reuse: refused, reported once, and every token of the chain inactive, the rotated token refused again after it. */
    async function expectReuse(site: SiteCalls, presented: string, tokens: { rts: string[]; ats: string[] }) {
      const from = events.length;
      const res = await site.refresh(presented);
      const tokensGiven = res.json.access_token === undefined ? 'none' : res.json.refresh_token === tokens.rts.at(-1) ? 'the kept answer again' : 'new tokens';
      expect({ status: res.status, error: res.json.error, tokensGiven }, res.text.slice(0, 200))
        .to.deep.equal({ status: 400, error: 'invalid_grant', tokensGiven: 'none' });
      expect(events.slice(from).map((e) => [e.model, e.clientId])).to.deep.equal([['RefreshToken', site.client.client_id]]);
      const active = await Promise.all([
        ...tokens.rts.map((t) => site.active(t, 'refresh_token')),
        ...tokens.ats.map((t) => site.active(t, 'access_token')),
      ]);
      expect(active, 'every token of the chain inactive').to.deep.equal(active.map(() => false));
      expect((await site.refresh(presented)).status, 'and nothing is issued later').to.equal(400);
    }

    it('H1: a refresh token revoked (RFC 7009) does not come back through the leeway: its predecessor presented again is a reuse, not a new rotation [SignIn(conf), Refresh, RevokeRefresh(current), Retry]', async () => {
      const { site, rt0, at0, rt1, at1 } = await chain(conf);
      const revoked = await site.revoke(rt1, 'refresh_token');
      expect({ status: revoked.status, text: revoked.text }).to.deep.equal({ status: 200, text: '' });
      expect(await site.active(rt1, 'refresh_token')).to.equal(false);
      await expectReuse(site, rt0, { rts: [rt0, rt1], ats: [at0, at1] });
    });

    it('H2: a public site gets no leeway: its rotated token presented again is a reuse, not the answer again [SignIn(pub), Refresh, Retry]', async () => {
      const { site, rt0, at0, rt1, at1 } = await chain(pub);
      await expectReuse(site, rt0, { rts: [rt0, rt1], ats: [at0, at1] });
    });

    it('H3: an answer whose access token was revoked (RFC 7009) is not given again: the rotated token presented again is a reuse [SignIn(conf), Refresh, RevokeAccess(current), Retry]', async () => {
      const { site, rt0, at0, rt1, at1 } = await chain(conf);
      const revoked = await site.revoke(at1, 'access_token');
      expect({ status: revoked.status, text: revoked.text }).to.deep.equal({ status: 200, text: '' });
      expect(await site.active(at1, 'access_token')).to.equal(false);
      // The chain itself goes on: revoking an access token leaves its refresh token working...
      expect(await site.active(rt1, 'refresh_token')).to.equal(true);
      // ...but the kept answer held the revoked token: presenting RT0 again is no retry any more.
      await expectReuse(site, rt0, { rts: [rt0, rt1], ats: [at0, at1] });
    });

    it('H4: after sign out everywhere, a chain without offline_access gets nothing through the leeway, though the session once signed in to the site with offline_access [SignIn(conf, offline_access), RemoveAccess(conf), SignIn(conf), LoseAnswer, SignOutEverywhere, Refresh]', async () => {
      person += 1;
      const email = `finding-${person}@example.com`;
      const browser = new Agent();
      const config = await discoverSite(h, conf);
      const site = asSite(h, conf);
      // The session signs in to the site with offline_access; that access is removed, and the person signs in there again without it.
      await signIn(h, config, browser, email, { scope: 'openid email offline_access', prompt: 'consent' });
      expect((await consoleApi(h, browser, 'POST', `/sites/${conf.client_id}/remove-access`)).status).to.equal(204);
      const { tokens } = await signIn(h, config, browser, email);
      const lost = await site.refresh(tokens.refresh_token!);
      expect(lost.status, lost.text).to.equal(200);
      // The answer never reached the site; meanwhile the person signs out everywhere: the chain ends.
      expect(await consoleApi(h, browser, 'POST', '/sessions/end-all')).to.deep.equal({ status: 200, body: { ended: 1 } });
      const dead = await Promise.all([
        site.active(lost.json.refresh_token!, 'refresh_token'), site.active(lost.json.access_token!, 'access_token'), site.active(tokens.access_token, 'access_token'),
      ]);
      expect(dead, 'no token of the chain is active').to.deep.equal([false, false, false]);
      const from = events.length;
      const retry = await site.refresh(tokens.refresh_token!);
      const tokensGiven = retry.json.access_token === undefined ? 'none' : retry.text === lost.text ? 'the kept answer again' : 'new tokens';
      expect({ status: retry.status, error: retry.json.error, tokensGiven }, retry.text.slice(0, 200))
        .to.deep.equal({ status: 400, error: 'invalid_grant', tokensGiven: 'none' });
      expect(events.slice(from), 'an ended chain: nothing to report').to.deep.equal([]);
    });
  });
}
