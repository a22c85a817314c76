import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { freePort } from '../helpers/net.ts';
import { discover, oauthError, RP, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';

type Line = { level: string; message: string; fields?: Record<string, unknown> };

/** The States and transitions rows in which a site loses access (spec), end to end. */
describe('loss of access: Block site, theft of a refresh token, organization removal', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  const lines: Line[] = [];
  const logger = {
    info: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'info', message, fields }),
    warn: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'warn', message, fields }),
    error: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'error', message, fields }),
  };
  let siteA: ReturnType<typeof siteClient>;
  const siteB = siteClient('loss-b');
  let orgSite: ReturnType<typeof siteClient>;
  let deadSite: ReturnType<typeof siteClient>;
  let a: oidc.Configuration;
  let dead: oidc.Configuration;
  let b: oidc.Configuration;
  let org: oidc.Configuration;

  before(async () => {
    receiver = await startReceiver();
    siteA = siteClient('loss-a', { backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    orgSite = siteClient('loss-org', { client_name: 'Acme Intranet', backchannel_logout_uri: receiver.url });
    // A site whose back-channel receiver is down: nothing listens on that port.
    deadSite = siteClient('loss-dead', { backchannel_logout_uri: `http://127.0.0.1:${await freePort()}/logout` });
    h = await startHarness('loss', {
      clients: [siteA, siteB, orgSite, deadSite],
      allowPrivateFetchHosts: ['127.0.0.1'],
      logger,
      // Every sign-in of this file comes from 127.0.0.1: more than the default 30 code requests per IP.
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: { limit: 200, windowMs: 15 * 60_000 } },
      organizations: [{
        id: 'acme', name: 'Acme', admins: ['boss@acme.example'],
        members: ['ann@acme.example', 'bob@acme.example', 'cy@acme.example', 'eve@acme.example', 'flo@acme.example', 'gil@acme.example', 'hal@acme.example', 'ida@acme.example'], clients: ['loss-org'],
      }, {
        // A second owner of the same site: its members keep their access there when Acme removes them.
        id: 'acme-partner', name: 'Acme Partner', admins: ['partner-boss@acme.example'], members: ['flo@acme.example'], clients: ['loss-org'],
      }],
    });
    a = await discover(h, siteA);
    b = await discover(h, siteB);
    org = await discover(h, orgSite);
    dead = await discover(h, deadSite);
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  const introspect = (config: oidc.Configuration, token: string) => oidc.tokenIntrospection(config, token);

  /** The console's JSON API as the person's browser calls it from the service's own page. */
  async function api(agent: Agent, method: string, path: string, headers: Record<string, string> = { origin: h.issuer }) {
    const res = await agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', ...headers });
    return { status: res.status, body: res.body ? JSON.parse(res.body) as unknown : undefined, headers: res.headers };
  }

  /** The site sends the browser to sign in; follows until the site's callback or a page of the service. */
  async function authorize(agent: Agent, config: oidc.Configuration, extra: Record<string, string> = {}) {
    const redirectUri = `${RP}/${config.clientMetadata().client_id}/callback`;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid email', state: 'st-1',
      code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...extra,
    });
    return agent.follow(await agent.get(url.href), (u) => u.startsWith(RP));
  }

  const callbackParams = (res: Response) => Object.fromEntries(new URL(res.location!).searchParams);
  const accountId = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;

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
      expect(deadLines.map((l) => [l.level, l.message])).to.deep.equal([['info', 'site access revoked'], ['warn', 'back-channel logout failed']]);
      expect(deadLines[1]!.fields).to.have.keys('clientId', 'reason');
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

  describe('Remove access', () => {
    /** POST /api/notify as the site. */
    const notify = (client: ReturnType<typeof siteClient>, sub: string) => fetch(`${h.issuer}/api/notify`, {
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

  describe('theft of a refresh token', () => {
    it('a rotated refresh token presented again revokes the chain; the event is logged with client, account and grant', async () => {
      const { tokens } = await signIn(h, a, new Agent(), 'theft1@example.com');
      const events: unknown[] = [];
      h.reference.provider.on('signout_notify.replay_detected' as never, (e: unknown) => events.push(e));
      const first = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
      // The site got its answer and refreshed again (until then the reuse leeway would answer the old token again).
      const rotated = await oidc.refreshTokenGrant(a, first.refresh_token!);
      const from = lines.length;

      // The thief (or the victim, whichever comes second) presents an old one.
      expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await oauthError(oidc.refreshTokenGrant(a, rotated.refresh_token!))).to.equal('invalid_grant');
      expect(await introspect(a, rotated.access_token)).to.deep.equal({ active: false });

      const grantId = (await h.reference.plugin.adapter.factory('AccessToken').find(tokens.access_token))?.grantId;
      expect(grantId, 'the access token died with its grant').to.equal(undefined);
      const report = lines.slice(from).filter((l) => l.message === 'refresh token reuse detected: grant revoked');
      expect(report).to.have.length(1);
      expect(report[0]!.level).to.equal('warn');
      expect(report[0]!.fields).to.include({ model: 'RefreshToken', clientId: 'loss-a', accountId: await accountId('theft1@example.com') });
      expect(report[0]!.fields!.grantId).to.be.a('string').and.have.length.greaterThan(10);
      expect(events).to.have.length(1);
      // No token value reaches the log.
      expect(JSON.stringify(lines)).to.not.include(tokens.refresh_token!).and.not.include(first.refresh_token!).and.not.include(rotated.refresh_token!);
    });

    it('reaches plugin.on listeners too; one that throws is logged and the answer stays invalid_grant; the function on() returns removes a listener', async () => {
      const { tokens } = await signIn(h, a, new Agent(), 'theft2@example.com');
      const seen: ReplayEvent[] = [];
      const removed: ReplayEvent[] = [];
      const stopRemoved = h.reference.plugin.on(REPLAY_EVENT, (e) => removed.push(e));
      stopRemoved();
      const stopSeen = h.reference.plugin.on(REPLAY_EVENT, (e) => seen.push(e));
      const stopThrowing = h.reference.plugin.on(REPLAY_EVENT, () => { throw new Error('a bug in the host'); });
      const onProvider: unknown[] = [];
      const providerListener = (e: unknown) => onProvider.push(e);
      h.reference.provider.on(REPLAY_EVENT as never, providerListener);
      try {
        const rotated = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
        await oidc.refreshTokenGrant(a, rotated.refresh_token!);
        const from = lines.length;
        expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
        expect(seen).to.have.length(1);
        expect(seen[0]).to.include({ model: 'RefreshToken', clientId: 'loss-a', accountId: await accountId('theft2@example.com') });
        expect(removed).to.deep.equal([]);
        // The throwing listener does not keep the provider's listeners from hearing it.
        expect(onProvider).to.deep.equal(seen);
        const logged = lines.slice(from).filter((l) => l.message === 'an event listener threw');
        expect(logged.map((l) => [l.level, l.fields])).to.deep.equal([['error', { event: REPLAY_EVENT, reason: 'a bug in the host' }]]);
      } finally {
        stopSeen();
        stopThrowing();
        h.reference.provider.off(REPLAY_EVENT as never, providerListener);
      }
    });
  });

  describe('an organization administrator removes a member', () => {
    it('answers the organization site\'s /api/notify for a removed member 403 not_connected, and writes nothing to their inbox', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'ida@acme.example');
      const idaId = await accountId('ida@acme.example');
      const notifyOrg = (title = 'Hello') => fetch(`${h.issuer}/api/notify`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${orgSite.client_id}:${orgSite.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sub: tokens.claims()!.sub, category: 'product', title, body: 'A message.' }),
      });
      // An organization's site reads the membership between the site's step and the person's, so that a
      // removed member's inbox is never written: the site's script, the membership, then the person's
      // script beside the host's contact lookup, 4 commands in 3 round trips on a single node and a
      // Cluster alike (another site's: 1 and 2, notify.test.ts).
      const { store } = h.reference.plugin;
      await h.reference.plugin.stopLetterWorker(); // it shares the store: idle while counting
      try {
        // Not counted: a Cluster node loads a script on its first use there (EVALSHA, then EVAL).
        expect((await notifyOrg('First')).status).to.equal(202);
        const before = { commands: store.commandsSent, trips: store.roundTrips };
        expect((await notifyOrg()).status).to.equal(202);
        expect({ commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }).to.deep.equal({ commands: 4, trips: 3 });
      } finally {
        h.reference.plugin.startLetterWorker();
      }
      expect(await h.reference.plugin.removeMember('acme', idaId)).to.equal('removed');
      const refused = await notifyOrg();
      expect([refused.status, await refused.json()]).to.deep.equal([403, { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' }]);
      expect((await h.reference.plugin.inbox.page(idaId, undefined, 10))!.items.map((item) => item.title)).to.deep.equal(['Hello', 'First']);
    });

    it('revokes the member at the organization’s sites at once and refuses the next sign-in with access_denied', async () => {
      const member = new Agent();
      const { tokens } = await signIn(h, org, member, 'ann@acme.example');
      const elsewhere = await signIn(h, b, member, 'ann@acme.example');
      const admin = new Agent();
      await signIn(h, org, admin, 'boss@acme.example');
      const annId = await accountId('ann@acme.example');
      const before = receiver.tokens.length;

      const list = await api(admin, 'GET', '/orgs/acme/members');
      expect(list.status).to.equal(200);
      expect(list.body).to.deep.include({ accountId: annId, email: 'ann@acme.example', admin: false, status: 'member' });

      expect((await api(admin, 'DELETE', `/orgs/acme/members/${annId}`)).status).to.equal(204);

      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await introspect(org, tokens.access_token)).to.deep.equal({ active: false });
      expect(receiver.tokens.length).to.equal(before + 1);
      expect((await receiver.verify(receiver.tokens.at(-1)!, h.issuer, 'loss-org')).sub).to.equal(tokens.claims()!.sub);
      // A site outside the organization keeps its access.
      expect((await introspect(b, elsewhere.tokens.access_token)).active).to.equal(true);

      // The member's service session lives, but the organization's site is closed to them.
      const again = await authorize(member, org);
      expect(callbackParams(again)).to.deep.include({
        error: 'access_denied',
        error_description: 'the account is not a member of the organization that owns this site',
        state: 'st-1',
      });
      const members = (await api(admin, 'GET', '/orgs/acme/members')).body as { accountId: string; status: string; removedAt?: string }[];
      const ann = members.find((m) => m.accountId === annId)!;
      expect(ann.status).to.equal('removed');
      expect(Date.parse(ann.removedAt!)).to.be.closeTo(Date.now(), 60_000);
      expect(ann.removedAt).to.equal(new Date(Date.parse(ann.removedAt!)).toISOString());
    });

    it('checks membership again at refresh and introspection, so a token that escaped the revocation still fails', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'bob@acme.example');
      // Only the removal is recorded: the grant and its tokens are left in place.
      expect(await h.reference.plugin.organizations.recordRemoval('acme', await accountId('bob@acme.example'))).to.equal('removed');
      expect(await introspect(org, tokens.access_token)).to.deep.equal({ active: false });
      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('is refused to anyone but the organization’s admins, and admins cannot be removed', async () => {
      const member = new Agent();
      await signIn(h, org, member, 'cy@acme.example');
      const cyId = await accountId('cy@acme.example');
      const bossId = await accountId('boss@acme.example');
      const denied = { status: 403, body: { error: 'access_denied', error_description: 'only the organization’s administrators may do this' } };
      expect(await api(member, 'GET', '/orgs/acme/members')).to.deep.include(denied);
      expect(await api(member, 'DELETE', `/orgs/acme/members/${cyId}`)).to.deep.include(denied);
      expect(await api(member, 'DELETE', `/orgs/nope/members/${cyId}`)).to.deep.include(denied);

      const admin = new Agent();
      await signIn(h, org, admin, 'boss@acme.example');
      expect(await api(admin, 'DELETE', `/orgs/acme/members/${bossId}`)).to.deep.include({ status: 400, body: { error: 'invalid_request', error_description: 'administrators are set in the configuration and cannot be removed here' } });
      expect(await api(admin, 'DELETE', '/orgs/acme/members/nobody')).to.deep.include({ status: 404, body: { error: 'not_found', error_description: 'no such member' } });
      expect(await api(admin, 'DELETE', `/orgs/acme/members/${cyId}`, { origin: 'https://evil.example' })).to.deep.include({ status: 403 });
      // cy is still a member after the refused requests.
      const { tokens } = await signIn(h, org, member, 'cy@acme.example');
      expect((await introspect(org, tokens.access_token)).active).to.equal(true);
    });

    it('never lets someone outside the organization sign in to its site', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'outsider@example.com');
      const res = await authorize(agent, org);
      expect(callbackParams(res)).to.deep.include({ error: 'access_denied', state: 'st-1' });
    });

    it('removes through the exported removeMember too; once, with one logout token (sub only: the site does not require sid)', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'eve@acme.example');
      const eveId = await accountId('eve@acme.example');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.removeMember('acme', eveId)).to.equal('removed');
      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
      const [token] = receiver.tokens.slice(before);
      expect(receiver.tokens.length - before).to.equal(1);
      const payload = await receiver.verify(token!, h.issuer, 'loss-org');
      expect([payload.sub, payload.sid]).to.deep.equal([tokens.claims()!.sub, undefined]);
      expect(await h.reference.plugin.removeMember('acme', eveId)).to.equal('already_removed');
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length - before).to.equal(1);
      expect(await h.reference.plugin.removeMember('acme', 'nobody')).to.equal('not_member');
    });

    it('logs each removal, a repeated one too (it heals a half-done earlier one), and nothing for someone who never was a member', async () => {
      await signIn(h, org, new Agent(), 'hal@acme.example');
      const halId = await accountId('hal@acme.example');
      let from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', halId)).to.equal('removed');
      const removed = { level: 'info', message: 'organization member removed', fields: { orgId: 'acme' } };
      expect(lines.slice(from).filter((l) => l.message !== 'site access revoked' && !l.message.startsWith('back-channel'))).to.deep.equal([removed]);
      from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', halId)).to.equal('already_removed');
      expect(lines.slice(from)).to.deep.equal([removed]);
      from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', 'nobody')).to.equal('not_member');
      expect(lines.slice(from)).to.deep.equal([]);
    });

    it('leaves the access of a member another organization owning the same site still counts', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'flo@acme.example');
      const floId = await accountId('flo@acme.example');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.removeMember('acme', floId)).to.equal('removed');
      expect((await oidc.refreshTokenGrant(org, tokens.refresh_token!)).access_token).to.be.a('string');
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length).to.equal(before);
    });
  });
});
