/**
 * Sign-out of the service (/session/end): "Stay signed in" keeps the service session and
 * ends on a page that says so, with the way back to the site only to an address it registered.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { oauthError, signIn, type Harness } from '../helpers/reference.ts';
import { cookieLine, expectCleared, expectMarker, sessionEndCalls, siteA, startSessionEnd, stopAtSite } from '../helpers/session-end.ts';
import { setUp } from '../helpers/set-up.ts';

describe('sign-out of the service (/session/end)', () => {
  let h: Harness;
  let siteB: ClientMetadata;
  let a: oidc.Configuration;
  let b: oidc.Configuration;

  setUp(() => startSessionEnd('session-end-stay-signed-in'), (started) => ({ h, siteB, a, b } = started));
  const { endSession } = sessionEndCalls(() => h);

  it('"Stay signed in" keeps the service session and ends on a page that says so: the next sign-in goes straight through', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end6@example.com');
    const page = await endSession(agent, { client_id: 'end-a' });
    expect(cookieLine(page, 'osn.return_rejected')).to.equal(undefined);
    expect(page.headers.get('content-security-policy')).to.include(`; form-action 'self' ${h.issuer};`);
    const stay = await agent.submit(page, formFor(page.body, '/session/end/confirm'));
    expectMarker(cookieLine(stay, 'osn.stayed'), 'osn.stayed=-');
    const res = await agent.follow(stay, stopAtSite);
    expect(res.status).to.equal(200);
    expect(res.url).to.equal(`${h.issuer}/session/end/success?client_id=end-a`);
    expectCleared(cookieLine(res, 'osn.stayed'), 'osn.stayed');
    // Taken once: the same page again sets no marker.
    expect(cookieLine(await agent.get(res.url), 'osn.stayed')).to.equal(undefined);
    expect(res.body).to.include(`<h1>${t('en', 'stayed.title')}</h1>`);
    expect(res.body).to.include(t('en', 'stayed.body', { serviceName: 'Sign-in service' }));
    expect(res.body).to.include(t('en', 'stayed.site', { clientName: 'Site end-a' }));
    expect(res.body).to.not.include(t('en', 'signedout.title'));
    expect(res.body).to.include(`<a class="button secondary" href="${h.issuer}/console">${t('en', 'stayed.console')}</a>`);
    // The site that asked is signed out (its grant without offline_access goes) ...
    expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
    // ... the person is not: no address, no code.
    const again = await agent.follow(await agent.get(oidc.buildAuthorizationUrl(a, {
      redirect_uri: siteA.redirect_uris![0]!, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256',
    }).href), stopAtSite);
    expect(again.body).to.not.include('name="email"');
  });

  it('"Stay signed in" without any site (the console\'s Sign out link) says nothing changed but the person is still signed in', async () => {
    const agent = new Agent();
    await signIn(h, a, agent, 'end6b@example.com');
    const page = await endSession(agent);
    const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
    expect(res.url).to.equal(`${h.issuer}/session/end/success`);
    expect(res.body).to.include(`<h1>${t('en', 'stayed.title')}</h1>`);
    expect(res.body).to.not.include('You are signed out');
  });

  it('"Stay signed in" with a registered return address ends on that page, with the address (and state) as the way back', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, b, agent, 'end6c@example.com');
    const back = siteB.post_logout_redirect_uris![0]!;
    // Another session's hint (another sid): the person is asked, and stays.
    const other = await signIn(h, b, new Agent(), 'end6c@example.com');
    const page = await endSession(agent, { id_token_hint: other.tokens.id_token!, post_logout_redirect_uri: back, state: 'st-6' });
    expect(page.body).to.include('Stay signed in');
    // The registered return address is kept (no rejection marker) and allowed as the form's target.
    expect(cookieLine(page, 'osn.return_rejected')).to.equal(undefined);
    expect(page.headers.get('content-security-policy')).to.include(`; form-action 'self' ${h.issuer} ${new URL(back).origin};`);
    const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')), stopAtSite);
    expect(res.status).to.equal(200);
    expect(res.url).to.equal(`${h.issuer}/session/end/success?client_id=end-b`);
    expect(res.body).to.include(`<a class="button primary" href="${back}?state=st-6">${t('en', 'stayed.back', { clientName: 'Site end-b' })}</a>`);
    expect(tokens.refresh_token).to.be.a('string');
  });

  describe('"Stay signed in" and the page after it', () => {
    const stayedCookie = (agent: Agent, value: string) => agent.cookies.get(new URL(h.issuer).host)!.set('osn.stayed', value);

    it('a confirmation the provider refuses (wrong xsrf) stays its error: no marker, no redirect', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end16@example.com');
      const page = await endSession(agent, { client_id: 'end-a' });
      const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { xsrf: 'forged' });
      expect(res.status).to.equal(400);
      expect(res.location).to.equal(undefined);
      expect(cookieLine(res, 'osn.stayed')).to.equal(undefined);
    });

    it('says "signed out" once the person signed out, though an earlier "Stay signed in" left its marker unread', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end17@example.com');
      const first = await endSession(agent, { client_id: 'end-a' });
      expectMarker(cookieLine(await agent.submit(first, formFor(first.body, '/session/end/confirm')), 'osn.stayed'), 'osn.stayed=-');
      const second = await endSession(agent, { client_id: 'end-a' });
      const done = await agent.follow(await agent.submit(second, formFor(second.body, '/session/end/confirm'), { logout: 'yes' }));
      expect(done.body).to.include('You are signed out');
      expect(done.body).to.not.include(t('en', 'stayed.title'));
    });

    it('opened by hand while signed in, says the person is still signed in', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end18@example.com');
      const res = await agent.get(`${h.issuer}/session/end/success`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include(`<h1>${t('en', 'stayed.title')}</h1>`);
      expect(res.body).to.not.include('You are signed out');
    });

    it('links back only to an address the named site registered: a marker planted in the cookie gives no link elsewhere', async () => {
      const agent = new Agent();
      await signIn(h, b, agent, 'end19@example.com');
      const back = siteB.post_logout_redirect_uris![0]!;
      const link = (body: string) => body.match(/<a class="button primary" href="([^"]*)"/)?.[1];
      stayedCookie(agent, 'https://evil.example/signed-out?state=x');
      expect(link((await agent.get(`${h.issuer}/session/end/success?client_id=end-b`)).body)).to.equal(undefined);
      stayedCookie(agent, `${back}?state=x`);
      expect(link((await agent.get(`${h.issuer}/session/end/success`)).body), 'no site named').to.equal(undefined);
      stayedCookie(agent, `${back}?state=x`);
      expect(link((await agent.get(`${h.issuer}/session/end/success?client_id=end-a`)).body), 'another site').to.equal(undefined);
      stayedCookie(agent, `${back}?state=x&next=elsewhere`);
      expect(link((await agent.get(`${h.issuer}/session/end/success?client_id=end-b`)).body), 'more than state added').to.equal(undefined);
      stayedCookie(agent, `${back}?state=x`);
      expect(link((await agent.get(`${h.issuer}/session/end/success?client_id=end-b`)).body)).to.equal(`${back}?state=x`);
    });
  });
});
