/**
 * Sign-out of the service in a real browser: Debian's Chromium driven by
 * playwright-core, against the reference provider (real Redis, real SMTP sink)
 * and a tiny relying site on 127.0.0.1. Proves the pages work as a person uses
 * them, with and without JavaScript, under their real Content-Security-Policy.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';

import { launchChromium, mark, problems, startSiteServer, step, type Chromium, type SiteServer } from '../helpers/browser.ts';
import { discover, oauthError, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

describe('sign-out of the service in a real browser (Chromium)', function () {
  // Every browser action and navigation is bounded by 30 s (BROWSER_TIMEOUT_MS);
  // a test runs a few sign-ins, so it gets a few of those.
  this.timeout(120_000);

  let site: SiteServer;
  let h: Harness;
  let client: ClientMetadata;
  let config: oidc.Configuration;
  let chromium: Chromium;
  let redirectUri: string;
  let signedOutUri: string;

  before(async () => {
    site = await startSiteServer();
    redirectUri = `${site.origin}/browser-site/callback`;
    signedOutUri = `${site.origin}/browser-site/signed-out`;
    client = siteClient('browser-site', {
      redirect_uris: [redirectUri],
      post_logout_redirect_uris: [signedOutUri],
      // ID tokens carry sid, so a hint can match the session (the auto-submit page).
      backchannel_logout_uri: `${site.origin}/browser-site/backchannel-logout`,
      backchannel_logout_session_required: true,
    });
    h = await startHarness('browser', { clients: [client], allowPrivateFetchHosts: ['127.0.0.1'] });
    config = await discover(h, client);
    chromium = await launchChromium();
  });

  after(async () => {
    // Everything that started is closed, whatever failed before.
    const closers = [() => chromium?.close(), () => h?.close(), () => site?.close()];
    const errors: unknown[] = [];
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw errors[0];
  });

  const callbacks = () => site.requests.filter((r) => r.url.pathname === '/browser-site/callback');

  /** Opens the site's authorization request (code + PKCE S256) in `page`. */
  async function openAuthorization(page: Page) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    await page.goto(url.href);
    return { verifier, state };
  }

  /** A person signs in as they would: address, code from the letter, consent; the browser reaches the site. */
  async function signIn(page: Page, email: string) {
    const log = chromium.log;
    const { verifier, state } = await step(log, 'open the authorization request', () => openAuthorization(page));
    await step(log, 'sign-in page', () => page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor());
    const sent = h.smtp.letters.length;
    await step(log, 'type the address', async () => {
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    });
    expect(await page.locator('main').innerText()).to.include(email);
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email), 30_000);
    const code = /\b(\d{6})\b/.exec(letter.subject ?? '')?.[1];
    expect(code, `a 6-digit code in the letter's subject: ${letter.subject}`).to.be.a('string');
    await step(log, 'type the code', async () => {
      await page.getByLabel('6-digit code').fill(code!);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: `${client.client_name} wants to access your account` }).waitFor();
    });
    const before = callbacks().length;
    await step(log, 'allow on the consent page', async () => {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL((u) => u.href.startsWith(`${redirectUri}?`));
    });
    const landed = new URL(page.url());
    expect(landed.searchParams.get('code')).to.be.a('string').and.not.equal('');
    expect(landed.searchParams.get('state')).to.equal(state);
    expect(await page.locator('body').innerText()).to.equal('callback reached');
    expect(callbacks().length, 'the site server saw the callback').to.equal(before + 1);
    // The site redeems the code: the browser really carried a valid one.
    const tokens = await oidc.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state });
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(userinfo.email).to.equal(email);
    return tokens;
  }

  /** Step 3: /session/end without a hint asks; "Sign out" ends on the service's signed-out page. */
  async function signOutWithoutHint(page: Page, email: string) {
    const log = chromium.log;
    const res = await step(log, 'open /session/end', () => page.goto(`${h.issuer}/session/end`));
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['content-security-policy']).to.include("default-src 'none'");
    const heading = page.getByRole('heading', { level: 1 });
    await step(log, 'confirmation page', () => heading.waitFor());
    expect(await heading.innerText()).to.equal('Sign out of Sign-in service?');
    expect(await page.locator('main').innerText()).to.include(`You are signed in as ${email}.`);
    const signOut = page.getByRole('button', { name: 'Sign out', exact: true });
    const stay = page.getByRole('button', { name: 'Stay signed in', exact: true });
    expect(await signOut.count(), '"Sign out" button').to.equal(1);
    expect(await stay.count(), '"Stay signed in" button').to.equal(1);
    expect(await signOut.isVisible()).to.equal(true);
    expect(await stay.isVisible()).to.equal(true);
    // A question is asked: nothing submits by itself (no script on this page).
    expect(await page.locator('script').count()).to.equal(0);
    expect(new URL(page.url()).pathname).to.equal('/session/end');

    await step(log, 'click "Sign out"', async () => {
      await signOut.click();
      await page.waitForURL(`${h.issuer}/session/end/success`);
    });
    expect(new URL(page.url()).pathname).to.equal('/session/end/success');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).to.equal('You are signed out');
    expect(await page.locator('main').innerText()).to.include('You are signed out of Sign-in service on this device.');
  }

  /** No silent re-entry: a new authorization request asks for the address again and never reaches the site. */
  async function expectSignInAsked(page: Page) {
    const before = callbacks().length;
    await step(chromium.log, 'new authorization request', () => openAuthorization(page));
    await step(chromium.log, 'sign-in page again', () => page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor());
    expect(new URL(page.url()).pathname).to.match(/^\/interaction\//);
    expect(await page.getByLabel('Email address').isVisible()).to.equal(true);
    expect(callbacks().length, 'no callback without the code').to.equal(before);
  }

  function expectNoProblems(from: ReturnType<typeof mark>) {
    const found = problems(chromium.log, from);
    expect(found, `CSP violations or page errors:\n${found.join('\n')}`).to.deep.equal([]);
  }

  it('with JavaScript: sign in by emailed code, then "Sign out" at /session/end without a hint ends the session', async () => {
    const from = mark(chromium.log);
    // The persistent context, on the fresh user data directory.
    const page = chromium.context.pages()[0] ?? await chromium.context.newPage();
    const email = 'browser1@example.com';
    const tokens = await signIn(page, email);
    await signOutWithoutHint(page, email);
    // The click really signed the person out: the site's refresh token (no offline_access) is dead.
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    await expectSignInAsked(page);
    expectNoProblems(from);
  });

  it('without JavaScript: the same sign-in and sign-out work in a context with javaScriptEnabled: false', async () => {
    const from = mark(chromium.log);
    const context: BrowserContext = await chromium.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const email = 'browser2@example.com';
      const tokens = await signIn(page, email);
      await signOutWithoutHint(page, email);
      expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
      await expectSignInAsked(page);
    } finally {
      await context.close();
    }
    expectNoProblems(from);
  });

  for (const javaScriptEnabled of [true, false]) {
    it(`with a hint for this person and session, ${javaScriptEnabled ? 'the auto-submit script (allowed by its CSP hash) signs out by itself' : 'without JavaScript one "Continue" button signs out'} and returns to the site with state`, async () => {
      const from = mark(chromium.log);
      const context = await chromium.newContext({ javaScriptEnabled });
      try {
        const page = await context.newPage();
        const email = `browser-hint-${javaScriptEnabled ? 'js' : 'nojs'}@example.com`;
        const tokens = await signIn(page, email);
        expect(tokens.claims()!.sid).to.be.a('string');
        const state = `st-${javaScriptEnabled ? 'js' : 'nojs'}`;
        const end = `${h.issuer}/session/end?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOutUri, state })}`;
        // 'commit': with JavaScript the page navigates away before its load event.
        const res = await step(chromium.log, 'open /session/end with the hint', () => page.goto(end, { waitUntil: 'commit' }));
        expect(res?.status()).to.equal(200);
        expect(res?.headers()['content-security-policy']).to.match(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
        if (!javaScriptEnabled) {
          await step(chromium.log, 'auto sign-out page without JavaScript', () => page.getByRole('heading', { level: 1, name: 'Signing you out…' }).waitFor());
          await page.getByRole('button', { name: 'Continue', exact: true }).click();
        }
        await step(chromium.log, 'land on the site\'s post_logout_redirect_uri', () => page.waitForURL((u) => u.href.startsWith(`${signedOutUri}?`)));
        expect(new URL(page.url()).searchParams.get('state')).to.equal(state);
        expect(await page.locator('body').innerText()).to.equal('site signed out');
        expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
        await expectSignInAsked(page);
      } finally {
        await context.close();
      }
      expectNoProblems(from);
    });
  }
});
