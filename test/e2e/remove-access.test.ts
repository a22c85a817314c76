/**
 * Remove access (loss of access): the site loses its access and is signed out without being
 * blocked; the next sign-in there asks for consent. One site, or all at once; through the API and the pages.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import type { BackchannelReceiver } from '../helpers/backchannel.ts';
import { lossOfAccessCalls, startLossOfAccess } from '../helpers/loss-of-access.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { oauthError, RP, signIn, siteClient, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

/** The States and transitions rows in which a site loses access (spec), end to end. */
describe('loss of access: Block site, theft of a refresh token, organization removal', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let siteA: ClientMetadata;
  let a: oidc.Configuration;
  let b: oidc.Configuration;

  setUp(() => startLossOfAccess('loss-remove'), (started) => ({ h, receiver, siteA, a, b } = started));
  const { introspect, api, authorize, callbackParams, accountId } = lossOfAccessCalls(() => h);

  describe('Remove access', () => {
    /** POST /api/notify as the site. */
    const notify = (client: ReturnType<typeof siteClient>, sub: string) => documentedFetch(`${h.issuer}/api/notify`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sub, category: 'transactional', title: 'Hello', body: 'A message.' }),
    });

    it('ends the site\'s access and sends back-channel logout without blocking it: the next sign-in there asks for consent, and the site is connected again', async () => {
      const laptop = new Agent();
      const first = await signIn(h, a, laptop, 'remove1@example.com');
      const otherSite = await signIn(h, b, laptop, 'remove1@example.com');
      const sub = first.tokens.claims()!.sub;
      expect((await notify(siteA, sub)).status).to.equal(202);
      const before = receiver.tokens.length;

      expect((await api(laptop, 'POST', '/sites/loss-a/remove-access')).status).to.equal(204);

      expect(await oauthError(oidc.refreshTokenGrant(a, first.tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await introspect(a, first.tokens.access_token)).to.deep.equal({ active: false });
      expect((await oidc.refreshTokenGrant(b, otherSite.tokens.refresh_token!)).access_token).to.be.a('string');
      const received = receiver.tokens.slice(before);
      expect(received).to.have.length(1);
      expect(await receiver.verify(received[0]!, h.issuer, 'loss-a')).to.include({ sub, sid: first.tokens.claims()!.sid });
      // Until the person signs in there again, the site may not write to them.
      expect(await (await notify(siteA, sub)).json()).to.deep.equal({ error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' });
      const sites = (await api(laptop, 'GET', '/sites')).body as { clientId: string; status: string; accessRemovedAt?: string }[];
      const removed = sites.find((s) => s.clientId === 'loss-a')!;
      expect(removed.status).to.equal('access_removed');
      expect(Date.parse(removed.accessRemovedAt!)).to.be.closeTo(Date.now(), 60_000);

      // The next sign-in asks for consent (not the blocked page); then the site has access again.
      const consent = await authorize(laptop, a);
      expect(new URL(consent.url).pathname).to.not.match(/blocked-site/);
      expect(consent.body).to.include('/confirm"');
      const done = await laptop.follow(await laptop.submit(consent, formFor(consent.body, '/confirm')), (u) => u.startsWith(RP));
      expect(callbackParams(done)).to.have.property('code');
      const again = (await api(laptop, 'GET', '/sites')).body as { clientId: string; status: string; accessRemovedAt?: string }[];
      expect(again.find((s) => s.clientId === 'loss-a')).to.include({ status: 'connected' }).and.not.have.property('accessRemovedAt');
      expect((await notify(siteA, sub)).status).to.equal(202);
    });

    it('is quiet when repeated; refuses a blocked site (409) and a site never used (404); works through the exported removeAccess too', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, a, agent, 'remove2@example.com');
      const id = await accountId('remove2@example.com');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.removeAccess(id, 'loss-a')).to.equal('removed');
      expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await h.reference.plugin.removeAccess(id, 'loss-a')).to.equal('already_removed');
      expect((await api(agent, 'POST', '/sites/loss-a/remove-access')).status).to.equal(204);
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length - before).to.equal(1);
      expect(await api(agent, 'POST', '/sites/loss-b/remove-access')).to.deep.include({ status: 404, body: { error: 'not_found', error_description: 'you never signed in to this site' } });
      expect((await api(agent, 'POST', '/sites/loss-a/remove-access', { origin: 'https://evil.example' })).status).to.equal(403);
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      expect(await api(agent, 'POST', '/sites/loss-a/remove-access')).to.deep.include({ status: 409, body: { error: 'site_blocked', error_description: 'the site is blocked: it has no access to remove; unblock it first' } });
      // Block keeps its meaning: still blocked.
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites.find((s) => s.clientId === 'loss-a')!.status).to.equal('blocked');
    });

    it('Remove access from all sites: one request, every connected site loses its access, and again removes nothing', async () => {
      const agent = new Agent();
      const atA = await signIn(h, a, agent, 'remove3@example.com');
      const atB = await signIn(h, b, agent, 'remove3@example.com');
      const res = await api(agent, 'POST', '/remove-access');
      expect(res.status).to.equal(200);
      expect((res.body as { removed: string[] }).removed.sort()).to.deep.equal(['loss-a', 'loss-b']);
      expect(await oauthError(oidc.refreshTokenGrant(a, atA.tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await oauthError(oidc.refreshTokenGrant(b, atB.tokens.refresh_token!))).to.equal('invalid_grant');
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites.map((s) => s.status)).to.deep.equal(['access_removed', 'access_removed']);
      expect(await api(agent, 'POST', '/remove-access')).to.deep.include({ status: 200, body: { removed: [] } });
    });

    it('Remove access from all sites leaves a blocked site blocked and does not count it', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'remove-all2@example.com');
      await signIn(h, b, agent, 'remove-all2@example.com');
      expect((await api(agent, 'POST', '/sites/loss-b/block')).status).to.equal(204);
      expect(await api(agent, 'POST', '/remove-access')).to.deep.include({ status: 200, body: { removed: ['loss-a'] } });
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(Object.fromEntries(sites.map((s) => [s.clientId, s.status]))).to.deep.equal({ 'loss-a': 'access_removed', 'loss-b': 'blocked' });
      expect(await h.reference.plugin.removeAllAccess(await accountId('remove-all2@example.com'))).to.deep.equal([]);
    });

    it('through the pages: a confirmation left open while the site was blocked elsewhere answers 409 and leaves the site blocked', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'remove5@example.com');
      const confirm = await agent.get(`${h.issuer}/console/sites/loss-a/remove-access`);
      const form = formFor(confirm.body, '/console/sites/loss-a/remove-access');
      expect((await api(agent, 'POST', '/sites/loss-a/block')).status).to.equal(204);
      const stale = await agent.request('POST', `${h.issuer}${form.action}`, form.fields, { origin: h.issuer, accept: 'text/html' });
      expect(stale.status).to.equal(409);
      expect(stale.headers.get('content-type')).to.match(/^text\/html/);
      expect(stale.location).to.equal(undefined);
      const sites = (await api(agent, 'GET', '/sites')).body as { clientId: string; status: string }[];
      expect(sites.find((x) => x.clientId === 'loss-a')!.status).to.equal('blocked');
    });

    it('through the pages: the confirmation says what happens, the answer comes back with its notice; the site\'s page shows its state', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, a, agent, 'remove4@example.com');
      const detail = await agent.get(`${h.issuer}/console/sites/loss-a`);
      expect(detail.status).to.equal(200);
      expect(detail.body).to.include('<h1><bdi>Site loss-a</bdi></h1>');
      expect(detail.body).to.include('<dt>Last used</dt><dd><time');
      const confirm = await agent.get(`${h.issuer}/console/sites/loss-a/remove-access?from=site`);
      expect(confirm.status).to.equal(200);
      expect(confirm.body).to.include('Site loss-a</bdi> loses its access to your account at once and is signed out.');
      const form = formFor(confirm.body, '/console/sites/loss-a/remove-access');
      expect(form.fields.from).to.equal('site');
      // A form without the person's token changes nothing.
      const forged = await agent.request('POST', `${h.issuer}${form.action}`, { from: 'site', csrf: 'x' }, { origin: h.issuer });
      expect(forged.status).to.equal(400);
      expect((await introspect(a, tokens.access_token)).active).to.equal(true);
      const done = await agent.request('POST', `${h.issuer}${form.action}`, form.fields, { origin: h.issuer });
      expect([done.status, done.location]).to.deep.equal([303, `${h.issuer}/console/sites/loss-a?done=access_removed#notice`]);
      expect((await introspect(a, tokens.access_token)).active).to.equal(false);
      const after = await agent.get(done.location!);
      expect(after.body).to.include('<p id="notice" class="notice" role="status" tabindex="-1">The site’s access is removed and it is signed out.');
      expect(after.body).to.include('<span class="badge badge-neutral">No access</span>');
      expect(after.body).to.not.include('/remove-access');
      // Remove access from all sites: its own confirmation.
      await signIn(h, b, agent, 'remove4@example.com');
      const all = await agent.get(`${h.issuer}/console/remove-access`);
      expect(all.body).to.include('<li><bdi>Site loss-b</bdi></li>').and.not.include('<li><bdi>Site loss-a</bdi></li>');
      const allDone = await agent.request('POST', `${h.issuer}/console/remove-access`, formFor(all.body, '/console/remove-access').fields, { origin: h.issuer });
      expect(allDone.location).to.equal(`${h.issuer}/console?done=all_access_removed#notice`);
      const sites = (await api(agent, 'GET', '/sites')).body as { status: string }[];
      expect(sites.map((s) => s.status)).to.deep.equal(['access_removed', 'access_removed']);
    });
  });
});
