/**
 * Sign-out of the service (/session/end): when it asks and when it does not (id_token_hint),
 * "Sign out" and what it ends, the signed-out page, and the back-channel logout token.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, forms } from '../helpers/agent.ts';
import type { BackchannelReceiver } from '../helpers/backchannel.ts';
import { oauthError, signIn, type Harness } from '../helpers/reference.ts';
import { sessionEndCalls, siteA, startSessionEnd, stopAtSite } from '../helpers/session-end.ts';
import { setUp } from '../helpers/set-up.ts';

describe('sign-out of the service (/session/end)', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let siteB: ClientMetadata;
  let a: oidc.Configuration;
  let b: oidc.Configuration;
  let c: oidc.Configuration;

  setUp(() => startSessionEnd('session-end-sign-out'), (started) => ({ h, receiver, siteB, a, b, c } = started));
  const { endSession } = sessionEndCalls(() => h);

  it('without id_token_hint asks, naming the account; "Sign out" ends the session and revokes what lacks offline_access', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end1@example.com');
    const page = await endSession(agent);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(page.body).to.include('end1@example.com');
    expect(page.body).to.include('Sign out').and.include('Stay signed in');
    expect(page.body).to.not.include('<script');
    const form = forms(page.body)[0]!;
    const done = await agent.follow(await agent.submit(page, form, { logout: 'yes' }));
    expect(done.status).to.equal(200);
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    expect(done.body).to.include('You are signed out');
    expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await oidc.tokenIntrospection(a, tokens.access_token)).active).to.equal(false);
    // No silent re-entry: the next sign-in asks for the address again.
    const again = await agent.follow(await agent.get(oidc.buildAuthorizationUrl(a, {
      redirect_uri: siteA.redirect_uris![0]!, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256',
    }).href), stopAtSite);
    expect(again.body).to.include('name="email"');
  });

  it('with a hint carrying this person and session (sub and sid) signs out without a question and returns with state', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, b, agent, 'end2@example.com');
    expect(tokens.claims()!.sid).to.be.a('string');
    const page = await endSession(agent, {
      id_token_hint: tokens.id_token!, post_logout_redirect_uri: siteB.post_logout_redirect_uris![0]!, state: 'st-2',
    });
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<script>');
    expect(page.headers.get('content-security-policy')).to.match(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const form = forms(page.body)[0]!;
    expect(form.fields).to.include({ logout: 'yes' });
    const res = await agent.submit(page, form);
    expect(res.status).to.equal(303);
    expect(res.location).to.equal(`${siteB.post_logout_redirect_uris![0]}?state=st-2`);
  });

  it('with a valid hint from a site registered with nothing special (no sid in its ID tokens) signs out without a question', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'end2b@example.com');
    expect(tokens.claims()!.sid).to.equal(undefined);
    const page = await endSession(agent, {
      id_token_hint: tokens.id_token!, post_logout_redirect_uri: siteA.post_logout_redirect_uris![0]!, state: 'st-a',
    });
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<script>');
    expect(page.body).to.not.include('Stay signed in');
    const res = await agent.submit(page, forms(page.body)[0]!);
    expect(res.status).to.equal(303);
    expect(res.location).to.equal(`${siteA.post_logout_redirect_uris![0]}?state=st-a`);
    expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
  });

  it('with a hint for another person asks', async () => {
    const agent = new Agent();
    await signIn(h, a, agent, 'end2c@example.com');
    const other = await signIn(h, a, new Agent(), 'end2d@example.com');
    const page = await endSession(agent, { id_token_hint: other.tokens.id_token! });
    expect(page.body).to.not.include('<script');
    expect(page.body).to.include('Stay signed in');
    expect(page.body).to.include('end2c@example.com');
  });

  it('with a hint from a site this session never signed in to asks, though the person is the same', async () => {
    const agent = new Agent();
    await signIn(h, a, agent, 'end2e@example.com');
    const elsewhere = await signIn(h, c, new Agent(), 'end2e@example.com');
    expect(elsewhere.tokens.claims()!.sid).to.equal(undefined);
    const page = await endSession(agent, { id_token_hint: elsewhere.tokens.id_token! });
    expect(page.body).to.not.include('<script');
    expect(page.body).to.include('Stay signed in');
  });

  it('with a hint from another session asks for confirmation', async () => {
    const first = new Agent();
    const second = new Agent();
    await signIn(h, b, first, 'end3@example.com');
    const other = await signIn(h, b, second, 'end3@example.com');
    expect(other.tokens.claims()!.sid).to.be.a('string');
    const page = await endSession(first, { id_token_hint: other.tokens.id_token! });
    expect(page.status).to.equal(200);
    expect(page.body).to.not.include('<script');
    expect(page.body).to.include('Stay signed in');
  });

  it('with no service session goes straight on to the signed-out page, through the service\'s own page (works without JavaScript)', async () => {
    const agent = new Agent();
    const page = await endSession(agent);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<html lang="en"');
    expect(page.body).to.include(`<h1>${t('en', 'logout.auto')}</h1>`);
    expect(page.body).to.include(`<noscript><button type="submit" class="primary">${t('en', 'logout.continue')}</button></noscript>`);
    expect(page.headers.get('content-security-policy')).to.match(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const form = forms(page.body)[0]!;
    expect(form.fields).to.include({ logout: 'yes' });
    const done = await agent.follow(await agent.submit(page, form));
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    expect(done.body).to.include('You are signed out');
  });

  it('speaks the reader\'s language on the signed-out page (Accept-Language), and keeps the markers to itself', async () => {
    const agent = new Agent();
    agent.acceptLanguage = 'fr-CH, en;q=0.5';
    const page = await endSession(agent);
    const done = await agent.follow(await agent.submit(page, forms(page.body)[0]!));
    expect(done.body).to.include('<html lang="fr"');
    expect(done.body).to.include(escapeHtml(t('fr', 'signedout.title')));
    expect(done.headers.getSetCookie().filter((l) => l.startsWith('osn.'))).to.deep.equal([]);
  });

  it('keeps offline_access grants working after the sign-out', async () => {
    const agent = new Agent();
    const online = await signIn(h, a, agent, 'end5@example.com');
    const offline = await signIn(h, b, agent, 'end5@example.com', { scope: 'openid offline_access', prompt: 'consent' });
    const page = await endSession(agent);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    expect(await oauthError(oidc.refreshTokenGrant(a, online.tokens.refresh_token!))).to.equal('invalid_grant');
    const refreshed = await oidc.refreshTokenGrant(b, offline.tokens.refresh_token!);
    expect((await oidc.tokenIntrospection(b, refreshed.access_token)).active).to.equal(true);
  });

  it('sends a signed back-channel logout token to a site on a loopback address', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, b, agent, 'end7@example.com');
    const before = receiver.tokens.length;
    const page = await endSession(agent);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    expect(receiver.tokens.length).to.equal(before + 1);
    const payload = await receiver.verify(receiver.tokens.at(-1)!, h.issuer, 'end-b');
    expect(payload.sub).to.equal(tokens.claims()!.sub);
    expect(payload.sid).to.equal(tokens.claims()!.sid);
    expect(payload.events).to.deep.equal({ 'http://schemas.openid.net/event/backchannel-logout': {} });
  });
});
