import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { discover, oauthError, RP, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

describe('sign-out of the service (/session/end)', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let a: oidc.Configuration;
  let b: oidc.Configuration;
  let c: oidc.Configuration;
  let d: oidc.Configuration;
  const siteA = siteClient('end-a');
  const siteC = siteClient('end-c');
  const siteD = siteClient('end-d', { subject_type: 'pairwise' });
  let siteB: ReturnType<typeof siteClient>;

  before(async () => {
    receiver = await startReceiver();
    siteB = siteClient('end-b', { backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    // Over thirty sign-ins from one address: more codes than an IP may ask for by default.
    const many = { limit: 1000, windowMs: 15 * 60_000 };
    h = await startHarness('session-end', {
      clients: [siteA, siteB, siteC, siteD], allowPrivateFetchHosts: ['127.0.0.1'],
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
    });
    a = await discover(h, siteA);
    b = await discover(h, siteB);
    c = await discover(h, siteC);
    d = await discover(h, siteD);
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  const endSession = (agent: Agent, params: Record<string, string> = {}) =>
    agent.get(`${h.issuer}/session/end?${new URLSearchParams(params)}`);
  const stopAtSite = (u: string) => u.startsWith(RP);
  /** The Set-Cookie line of `name` in a response, if any. */
  const cookieLine = (res: { headers: Headers }, name: string) => res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));
  /** A short-lived marker cookie of the sign-out pages: only for /session/end, HttpOnly, SameSite=Lax, about 10 minutes. */
  function expectMarker(line: string | undefined, value: string) {
    expect(line).to.be.a('string');
    const [pair, ...attributes] = line!.split('; ');
    expect(pair).to.equal(value);
    const attrs = Object.fromEntries(attributes.map((a) => a.split('=') as [string, string?]).map(([k, v]) => [k.toLowerCase(), v ?? true]));
    expect(attrs).to.include({ path: '/session/end', samesite: 'lax', httponly: true });
    expect(Date.parse(attrs.expires as string) - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
  }
  /** The marker taken: cleared (expired) on the page that read it. */
  const expectCleared = (line: string | undefined, name: string) => {
    expect(line).to.match(new RegExp(`^${name.replace('.', '\\.')}=; path=/session/end; expires=Thu, 01 Jan 1970 00:00:00 GMT`));
  };

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

    it('with a hint that is no JWT: oidc-provider answers the hint itself, and no refusal is marked', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end11@example.com');
      const page = await endSession(agent, { id_token_hint: 'not-a-jwt', post_logout_redirect_uri: 'https://evil.example/' });
      expect(page.status).to.equal(400);
      expect(page.body).to.include(`<title>${t('en', 'error.title')}`);
      expect(cookieLine(page, 'osn.return_rejected')).to.equal(undefined);
    });

    it('with a hint that is no JWT and nobody signed in: the provider\'s error stays, not replaced by the sign-out page', async () => {
      const page = await endSession(new Agent(), { id_token_hint: 'not-a-jwt' });
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

  describe('the question page', () => {
    it('names the site that asked, by its name', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end12@example.com');
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.body).to.include(t('en', 'logout.site_asked', { clientName: 'Site end-a' }));
    });

    it('speaks the person\'s stored language over the browser\'s, and so does the page after "Stay signed in"', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'de';
      await signIn(h, a, agent, 'end13@example.com');
      agent.acceptLanguage = 'fr';
      const page = await endSession(agent, { client_id: 'end-a', ui_locales: 'fr' });
      expect(page.body).to.include('<html lang="de"');
      expect(page.body).to.include(escapeHtml(t('de', 'logout.stay')));
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.body).to.include('<html lang="de"');
      expect(res.body).to.include(escapeHtml(t('de', 'stayed.title')));
    });

    it('for a person with no stored language, speaks the browser\'s (Accept-Language), on both pages', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end14@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end14@example.com'))!;
      await h.redis!.hdel(`${h.prefix}account:{${accountId}}`, 'locale');
      agent.acceptLanguage = 'fr-CH, en;q=0.5';
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.body).to.include('<html lang="fr"');
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.body).to.include('<html lang="fr"');
      expect(res.body).to.include(escapeHtml(t('fr', 'stayed.title')));
    });

    it('for a person whose account the host no longer knows: asks without naming an address, and "Stay signed in" still ends on its page', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end20@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end20@example.com'))!;
      await h.redis!.del(`${h.prefix}account:{${accountId}}`);
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.status).to.equal(200);
      expect(page.body).to.include(t('en', 'logout.stay'));
      expect(page.body).to.not.include('end20@example.com');
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.status).to.equal(200);
      expect(res.body).to.include(`<h1>${t('en', 'stayed.title')}</h1>`);
    });

    it('without a session, speaks ui_locales first, then Accept-Language', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'fr';
      expect((await endSession(agent, { ui_locales: 'de' })).body).to.include('<html lang="de"');
      expect((await endSession(agent)).body).to.include('<html lang="fr"');
    });

    it('with a hint from a pairwise site carrying the person as that site sees them: signs out without a question', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, d, agent, 'end15@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end15@example.com'))!;
      expect(tokens.claims()!.sub).to.not.equal(accountId);
      const page = await endSession(agent, { id_token_hint: tokens.id_token! });
      expect(page.body).to.include('<script>');
      expect(page.body).to.not.include(t('en', 'logout.stay'));
    });
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

export type { Response };
