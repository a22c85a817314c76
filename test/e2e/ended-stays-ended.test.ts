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

import type { AnswerAgainEvent, ReplayEvent } from '../../src/index.ts';
import { formFor } from '../helpers/agent.ts';
import { confidential, endedChainsCalls, KINDS, LEEWAY, orgSite, publicSite, startEndedChains } from '../helpers/ended-chains.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

for (const kind of KINDS) describe(`access that was removed stays removed (${kind})`, () => {
  let h: Harness;
  let replays: ReplayEvent[];
  let answeredAgain: AnswerAgainEvent[];

  const world = setUp(() => startEndedChains('ended-stays-ended', kind), (started) => ({ h, replays, answeredAgain } = started));
  const { refresh, active, revoke, newChain, expectEnded, consoleApi, accountId } = endedChainsCalls(world, kind);

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
});
