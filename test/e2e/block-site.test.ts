/**
 * Block site (loss of access): every grant and token of the person at the site ends,
 * the site hears of it through the back channel, and gets nothing more until unblocked.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import type { BackchannelReceiver } from '../helpers/backchannel.ts';
import { lossOfAccessCalls, startLossOfAccess, type Line } from '../helpers/loss-of-access.ts';
import { oauthError, RP, signIn, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

/** The States and transitions rows in which a site loses access (spec), end to end. */
describe('loss of access: Block site, theft of a refresh token, organization removal', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let lines: Line[];
  let a: oidc.Configuration;
  let b: oidc.Configuration;
  let org: oidc.Configuration;
  let dead: oidc.Configuration;

  setUp(() => startLossOfAccess('loss-block'), (started) => ({ h, receiver, lines, a, b, org, dead } = started));
  const { introspect, api, authorize, callbackParams, accountId } = lossOfAccessCalls(() => h);

  describe('Block site', () => {
    it('kills every grant and token of that account at that site, sends back-channel logout, and leaves the rest alone', async () => {
      const laptop = new Agent();
      const phone = new Agent();
      const first = await signIn(h, a, laptop, 'block1@example.com');
      const second = await signIn(h, a, phone, 'block1@example.com', { scope: 'openid email offline_access', prompt: 'consent' });
      const otherSite = await signIn(h, b, laptop, 'block1@example.com');
      const otherPerson = await signIn(h, a, new Agent(), 'block1-other@example.com');
      const sids = [first.tokens.claims()!.sid, second.tokens.claims()!.sid];
      const before = receiver.tokens.length;

      const res = await api(laptop, 'POST', '/sites/loss-a/block');
      expect(res.status).to.equal(204);

      for (const { tokens } of [first, second]) {
        expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
        expect(await introspect(a, tokens.access_token)).to.deep.equal({ active: false });
      }
      expect((await introspect(b, otherSite.tokens.access_token)).active).to.equal(true);
      expect((await oidc.refreshTokenGrant(b, otherSite.tokens.refresh_token!)).access_token).to.be.a('string');
      expect((await introspect(a, otherPerson.tokens.access_token)).active).to.equal(true);

      // One logout token per session of the person at the site (the site requires sid).
      const received = receiver.tokens.slice(before);
      expect(received).to.have.length(2);
      const payloads = await Promise.all(received.map((t) => receiver.verify(t, h.issuer, 'loss-a')));
      expect(payloads.map((p) => p.sub)).to.deep.equal([first.tokens.claims()!.sub, first.tokens.claims()!.sub]);
      expect(payloads.map((p) => p.sid).sort()).to.deep.equal([...sids].sort());
      expect(payloads[0]!.events).to.deep.equal({ 'http://schemas.openid.net/event/backchannel-logout': {} });

      const sites = (await api(laptop, 'GET', '/sites')).body as { clientId: string; status: string; blockedAt?: string; offlineAccess: boolean }[];
      expect(sites.map((s) => [s.clientId, s.status])).to.have.deep.members([['loss-a', 'blocked'], ['loss-b', 'connected']]);
      expect(Date.parse(sites.find((s) => s.clientId === 'loss-a')!.blockedAt!)).to.be.closeTo(Date.now(), 60_000);
    });

    it('is idempotent: blocking again revokes nothing and sends no logout token, and every token sent carried its sid', async () => {
      const laptop = new Agent();
      const first = await signIn(h, a, laptop, 'block7@example.com');
      const second = await signIn(h, a, new Agent(), 'block7@example.com');
      const id = await accountId('block7@example.com');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.blockSite(id, 'loss-a')).to.equal('blocked');
      const sent = receiver.tokens.slice(before);
      const payloads = await Promise.all(sent.map((t) => receiver.verify(t, h.issuer, 'loss-a')));
      expect(payloads.map((p) => p.sid).sort()).to.deep.equal([first.tokens.claims()!.sid, second.tokens.claims()!.sid].sort());

      for (let i = 0; i < 5; i += 1) expect(await h.reference.plugin.blockSite(id, 'loss-a')).to.equal('already_blocked');
      expect((await api(laptop, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length - before).to.equal(2);
      expect(lines.filter((l) => l.message === 'site access revoked' && l.fields?.clientId === 'loss-a').length).to.be.at.least(1);
    });

    it('then gives the site no tokens: signing in there shows "You blocked … on <date>", and Cancel answers access_denied', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'block2@example.com');
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);

      const page = await authorize(agent, a);
      expect(page.status).to.equal(200);
      expect(new URL(page.url).pathname).to.match(/^\/console\/blocked-site\/[\w-]+$/);
      const date = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' }).format(Date.now());
      expect(page.body).to.include(`<h1>You blocked Site loss-a on ${date}</h1>`);
      expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");

      const done = await agent.follow(await agent.submit(page, formFor(page.body, '/cancel')), (u) => u.startsWith(RP));
      expect(callbackParams(done)).to.deep.include({ error: 'access_denied', error_description: 'the person has blocked this site', state: 'st-1' });
      expect(callbackParams(done)).to.not.have.property('code');

      // Without a page to show (prompt=none) the answer is access_denied at once.
      const silent = await authorize(agent, a, { prompt: 'none' });
      expect(callbackParams(silent)).to.deep.include({ error: 'access_denied', state: 'st-1' });
    });

    it('"Unblock and continue" asks for consent again and then the site gets tokens', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'block3@example.com');
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      const page = await authorize(agent, a);
      const consent = await agent.follow(await agent.submit(page, formFor(page.body, '/unblock')), (u) => u.startsWith(RP));
      // Nothing the site had comes back: the person is asked again.
      expect(consent.body).to.include('/confirm"');
      const done = await agent.follow(await agent.submit(consent, formFor(consent.body, '/confirm')), (u) => u.startsWith(RP));
      expect(callbackParams(done)).to.have.property('code');
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites.find((s) => s.clientId === 'loss-a')!.status).to.equal('connected');
    });

    it('"Unblock and continue" on a page left open while another account signed in on the same browser unblocks nothing: the page is over (400), the blocked account\'s site stays blocked', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'block-shared@example.com');
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      const page = await authorize(agent, a);
      expect(new URL(page.url).pathname).to.match(/^\/console\/blocked-site\/[\w-]+$/);
      // Someone else signs in on this browser (a shared computer), just now: a recent sign-in, of another account.
      await signIn(h, b, agent, 'block-other@example.com', { prompt: 'login' });
      const res = await agent.submit(page, formFor(page.body, '/unblock'));
      expect(res.status).to.equal(400);
      expect(res.body).to.include('<h1>Something went wrong</h1>').and.include('Your sign-in took too long or has already finished.');
      const id = await accountId('block-shared@example.com');
      expect((await h.reference.plugin.connectedSites(id)).find((s) => s.clientId === 'loss-a')?.status).to.equal('blocked');
    });

    it('Unblock in the console lets the site sign the person in again', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'block4@example.com');
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      expect((await api(agent, 'POST', '/sites/loss-a/unblock')).status).to.equal(204);
      const { tokens } = await signIn(h, a, agent, 'block4@example.com');
      expect((await introspect(a, tokens.access_token)).active).to.equal(true);
    });

    it('refuses the console API without a session (401), from another origin (403), and for a site never used (404)', async () => {
      const stranger = new Agent();
      expect(await api(stranger, 'GET', '/sites')).to.deep.include({ status: 401, body: { error: 'login_required', error_description: 'sign in to the service first' } });
      const agent = new Agent();
      await signIn(h, a, agent, 'block5@example.com');
      expect(await api(agent, 'POST', '/sites/loss-a/block', { origin: 'https://evil.example' })).to.deep.include({ status: 403, body: { error: 'invalid_request', error_description: 'cross-origin request refused' } });
      expect((await api(agent, 'POST', '/sites/loss-a/block', {})).status).to.equal(403);
      expect((await api(agent, 'POST', '/sites/loss-a/block', { 'sec-fetch-site': 'cross-site' })).status).to.equal(403);
      expect(await api(agent, 'POST', '/sites/loss-b/block')).to.deep.include({ status: 404, body: { error: 'not_found', error_description: 'you never signed in to this site' } });
      // Nothing was blocked by the refused requests.
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites).to.have.length(1);
      expect(sites[0]!.status).to.equal('connected');
    });

    it('blocks through the exported blockSite too', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, a, agent, 'block6@example.com');
      expect(await h.reference.plugin.blockSite(await accountId('block6@example.com'), 'loss-a')).to.equal('blocked');
      expect(await h.reference.plugin.blockSite(await accountId('block6@example.com'), 'loss-a')).to.equal('already_blocked');
      expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await h.reference.plugin.blockSite(await accountId('block6@example.com'), 'loss-b')).to.equal('not_connected');
    });

    it('unblocks through the exported unblockSite: connected, already_connected, not_connected', async () => {
      await signIn(h, a, new Agent(), 'unblock1@example.com');
      const id = await accountId('unblock1@example.com');
      expect(await h.reference.plugin.unblockSite(id, 'loss-a')).to.equal('already_connected');
      expect(await h.reference.plugin.blockSite(id, 'loss-a')).to.equal('blocked');
      expect(await h.reference.plugin.unblockSite(id, 'loss-a')).to.equal('connected');
      expect(await h.reference.plugin.unblockSite(id, 'loss-a')).to.equal('already_connected');
      expect(await h.reference.plugin.unblockSite(id, 'loss-b')).to.equal('not_connected');
    });

    it('Unblock does not give access back to a site whose access was removed', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'unblock2@example.com');
      const id = await accountId('unblock2@example.com');
      expect(await h.reference.plugin.removeAccess(id, 'loss-a')).to.equal('removed');
      expect(await h.reference.plugin.unblockSite(id, 'loss-a')).to.equal('already_connected');
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites.find((s) => s.clientId === 'loss-a')!.status).to.equal('access_removed');
    });

    it('logs what it did: the grants revoked, each logout token delivered or failed (a site without a receiver: none)', async () => {
      const laptop = new Agent();
      await signIn(h, a, laptop, 'block8@example.com');
      await signIn(h, b, laptop, 'block8@example.com');
      await signIn(h, dead, laptop, 'block8@example.com');
      const id = await accountId('block8@example.com');

      let from = lines.length;
      expect(await h.reference.plugin.blockSite(id, 'loss-a')).to.equal('blocked');
      expect(lines.slice(from).filter((l) => l.fields?.clientId === 'loss-a')).to.deep.equal([
        { level: 'info', message: 'site access revoked', fields: { clientId: 'loss-a', grants: 1 } },
        { level: 'info', message: 'back-channel logout delivered', fields: { clientId: 'loss-a' } },
      ]);

      from = lines.length;
      expect(await h.reference.plugin.blockSite(id, 'loss-b')).to.equal('blocked');
      expect(lines.slice(from).filter((l) => l.fields?.clientId === 'loss-b')).to.deep.equal([
        { level: 'info', message: 'site access revoked', fields: { clientId: 'loss-b', grants: 1 } },
      ]);

      from = lines.length;
      expect(await h.reference.plugin.blockSite(id, 'loss-dead')).to.equal('blocked');
      const deadLines = lines.slice(from).filter((l) => l.fields?.clientId === 'loss-dead');
      // The first try failed: the logout is left to the queue (docs/backchannel-logout.md).
      expect(deadLines.map((l) => [l.level, l.message])).to.deep.equal([['info', 'site access revoked'], ['warn', 'back-channel logout will be retried']]);
      expect(deadLines[1]!.fields).to.have.keys('clientId', 'attempt', 'reason');
      expect(deadLines[1]!.fields!.attempt).to.equal(1);
      expect(deadLines[1]!.fields!.reason).to.be.a('string').and.not.equal('');
      // Blocking again: nothing left to revoke, nothing logged.
      from = lines.length;
      expect(await h.reference.plugin.blockSite(id, 'loss-dead')).to.equal('already_blocked');
      expect(lines.length).to.equal(from);
    });

    it('after the person signed out of the service (the offline grant alive), Block site tells a sub-only site once: one logout token without sid', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, a, agent, 'block9@example.com', { scope: 'openid email offline_access', prompt: 'consent' });
      const orgAgent = new Agent();
      const atOrg = await signIn(h, org, orgAgent, 'gil@acme.example', { scope: 'openid email offline_access', prompt: 'consent' });
      // The person signs out of the service at the organization's site (sub-only site): the session ends, the offline grant lives.
      const end = await orgAgent.get(`${h.issuer}/session/end?${new URLSearchParams({ id_token_hint: atOrg.tokens.id_token!, client_id: 'loss-org' })}`);
      await orgAgent.follow(end, () => false);
      await new Promise((r) => setTimeout(r, 100));
      expect((await oidc.refreshTokenGrant(org, atOrg.tokens.refresh_token!)).access_token).to.be.a('string');
      const before = receiver.tokens.length;
      const gilId = await accountId('gil@acme.example');
      expect(await h.reference.plugin.blockSite(gilId, 'loss-org')).to.equal('blocked');
      const received = receiver.tokens.slice(before);
      expect(received).to.have.length(1);
      const payload = await receiver.verify(received[0]!, h.issuer, 'loss-org');
      expect([payload.sub, payload.sid]).to.deep.equal([atOrg.tokens.claims()!.sub, undefined]);
      // The other site's grant, with its own session, was never touched.
      expect((await oidc.refreshTokenGrant(a, tokens.refresh_token!)).access_token).to.be.a('string');
    });
  });
});
