/**
 * Sign-out of the service (/session/end): the post_logout_redirect_uri, kept only when the
 * site that asked registered it, cleaned whatever the method or the spelling of the path.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { oauthError, signIn, type Harness } from '../helpers/reference.ts';
import { cookieLine, expectCleared, expectMarker, sessionEndCalls, siteA, startSessionEnd } from '../helpers/session-end.ts';
import { setUp } from '../helpers/set-up.ts';

describe('sign-out of the service (/session/end)', () => {
  let h: Harness;
  let siteB: ClientMetadata;
  let a: oidc.Configuration;

  setUp(() => startSessionEnd('session-end-return-address'), (started) => ({ h, siteB, a } = started));
  const { endSession } = sessionEndCalls(() => h);

  it('signs out anyway when post_logout_redirect_uri is not registered, and says the address was not accepted', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end4@example.com');
    const page = await endSession(agent, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/', state: 's' });
    expect(page.status).to.equal(200);
    expectMarker(cookieLine(page, 'osn.return_rejected'), 'osn.return_rejected=1');
    // The refused address is not allowed as a form target either.
    expect(page.headers.get('content-security-policy')).to.not.include('evil.example');
    const res = await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' });
    expect(res.location).to.equal(`${h.issuer}/session/end/success`);
    const done = await agent.follow(res);
    expect(done.status).to.equal(200);
    expectCleared(cookieLine(done, 'osn.return_rejected'), 'osn.return_rejected');
    expect(done.body).to.include('not registered');
    expect(done.body).to.not.include('evil.example');
    expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
  });

  it('cleans an unregistered post_logout_redirect_uri however the path is spelled (/Session/End/ reaches the same route)', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end4c@example.com');
    const query = new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/', state: 's' });
    const page = await agent.get(`${h.issuer}/Session/End/?${query}`);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('name="logout" value="yes"');
    const res = await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' });
    expect(res.location).to.equal(`${h.issuer}/session/end/success`);
    expect((await agent.follow(res)).body).to.include('not registered');
  });

  it('answers a POST to /session/end with the same parameters as a GET, cleaned like one', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end4b@example.com');
    const posted = await agent.request('POST', `${h.issuer}/session/end`, {
      id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/', state: 's',
    });
    expect(posted.status).to.equal(303);
    const target = new URL(posted.location!);
    expect(target.pathname).to.equal('/session/end');
    expect(target.searchParams.get('id_token_hint')).to.equal(tokens.id_token);
    const page = await agent.follow(posted);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('name="logout" value="yes"');
    const res = await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' });
    expect(res.location).to.equal(`${h.issuer}/session/end/success`);
  });

  describe('the return address', () => {
    const back = siteA.post_logout_redirect_uris![0]!;

    it('named with client_id alone (no hint) and registered: kept, and "Sign out" goes back to it with state', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end8@example.com');
      const page = await endSession(agent, { client_id: 'end-a', post_logout_redirect_uri: back, state: 'st-8' });
      expect(page.status).to.equal(200);
      expect(cookieLine(page, 'osn.return_rejected')).to.equal(undefined);
      const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
      expect(res.status).to.equal(303);
      expect(res.location).to.equal(`${back}?state=st-8`);
    });

    it('named with client_id alone and not registered for that site: refused (another site\'s address included)', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end9@example.com');
      const page = await endSession(agent, { client_id: 'end-a', post_logout_redirect_uri: siteB.post_logout_redirect_uris![0]!, state: 's' });
      expect(page.status).to.equal(200);
      expectMarker(cookieLine(page, 'osn.return_rejected'), 'osn.return_rejected=1');
      const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
      expect(res.location).to.equal(`${h.issuer}/session/end/success`);
    });

    it('with neither hint nor client_id there is nobody to check it against: refused, and the sign-out still asks', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end10@example.com');
      const page = await endSession(agent, { post_logout_redirect_uri: back });
      expect(page.status).to.equal(200);
      expect(page.body).to.include(t('en', 'logout.stay'));
      expectMarker(cookieLine(page, 'osn.return_rejected'), 'osn.return_rejected=1');
    });

    it('with a hint that is no JWT: the hint is not used, so the person is asked and even a registered address refused', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end11@example.com');
      const page = await endSession(agent, { id_token_hint: 'not-a-jwt', post_logout_redirect_uri: back, state: 's' });
      expect(page.status).to.equal(200);
      expect(page.body).to.include(t('en', 'logout.stay'));
      expectMarker(cookieLine(page, 'osn.return_rejected'), 'osn.return_rejected=1');
      const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
      expect(res.location).to.equal(`${h.issuer}/session/end/success`);
    });

    it('with a client_id the provider does not know and nobody signed in: the provider\'s error stays, not replaced by the sign-out page', async () => {
      const page = await endSession(new Agent(), { client_id: 'no-such-site' });
      expect(page.status).to.equal(400);
      expect(page.body).to.include(`<title>${t('en', 'error.title')}`);
      expect(page.body).to.not.include(t('en', 'logout.auto'));
    });

    it('is cleaned only on GET and POST: another method is the provider\'s to refuse, with no marker', async () => {
      const agent = new Agent();
      const res = await agent.request('PUT', `${h.issuer}/session/end?${new URLSearchParams({ client_id: 'end-a', post_logout_redirect_uri: 'https://evil.example/' })}`);
      expect(res.status).to.equal(404);
      expect(cookieLine(res, 'osn.return_rejected')).to.equal(undefined);
    });
  });
});
