/**
 * Every page a person can reach, walked in Chromium as people meet them, on
 * a phone (390 px) and on a desktop: axe-core (npm) finds no serious or
 * critical violation, and no page scrolls sideways at 390 px. Along the way:
 * the code step (attempts left, Send a new code), notices where the eyes are
 * after every console action (with and without JavaScript), "Stay signed in"
 * ending on a page that says so, and long names wrapping between words.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t } from '../../src/i18n/index.ts';
import { checkPage, PHONE } from '../helpers/axe.ts';
import { launchChromium, mark, problems, saveScreenshot, startSiteServer, step, type Chromium, type SiteServer } from '../helpers/browser.ts';
import { freePort } from '../helpers/net.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const SITE_NAME = 'Northwind Shop Outfitters';
const ADMIN = 'admin@walk.example';
const MEMBER = 'a.member.with.a.rather.long.address.for.testing@subdomain.walk-example.example';

describe('every page a person can reach, in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(300_000);

  let site: SiteServer;
  let h: Harness;
  let client: ClientMetadata;
  let intranet: ClientMetadata;
  let chromium: Chromium;
  let upstream: TestUpstream;
  const found: string[] = [];
  const UPSTREAM = 'Social Example';

  before(async () => {
    site = await startSiteServer();
    client = siteClient('walk', {
      client_name: SITE_NAME,
      client_uri: 'https://northwind-shop-outfitters-international.example',
      redirect_uris: [`${site.origin}/walk/callback`],
      post_logout_redirect_uris: [`${site.origin}/walk/signed-out`],
    });
    intranet = siteClient('walk-intranet', { client_name: 'Acme Intranet', redirect_uris: [`${site.origin}/walk-intranet/callback`] });
    const many = { limit: 10_000, windowMs: 60_000 };
    // http://localhost: passkeys need a domain as RP ID; the upstream lives on 127.0.0.1.
    const port = await freePort();
    upstream = await startTestUpstream({ redirectUri: `http://localhost:${port}/upstream/social/callback` });
    upstream.people.set('admin-at-social', { email: 'someone.else@social.example', email_verified: true, name: 'Admin Elsewhere' });
    h = await startHarness('pages-browser', {
      port, host: 'localhost',
      upstreams: [{ id: 'social', name: UPSTREAM, issuer: upstream.issuer, ...upstream.client }],
      clients: [client, intranet],
      organizations: [{ id: 'acme', name: 'Acme Corporation International Holdings', admins: [ADMIN], members: [MEMBER, 'second.member@walk.example'], clients: ['walk-intranet'] }],
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
    });
    chromium = await launchChromium({ viewport: PHONE });
  });

  after(async () => {
    const closers = [() => chromium?.close(), () => h?.close(), () => site?.close(), () => upstream?.close()];
    for (const close of closers) await close().catch(() => {});
  });

  async function check(page: Page, label: string): Promise<void> {
    found.push(...await step(chromium.log, `check ${label}`, () => checkPage(page, label)));
  }

  function authorizationUrl(c: ClientMetadata, params: Record<string, string> = {}): string {
    const url = new URL('/auth', h.issuer);
    url.search = new URLSearchParams({
      client_id: c.client_id, response_type: 'code', redirect_uri: c.redirect_uris![0]!, scope: 'openid email',
      state: oidc.randomState(), code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...params,
    }).toString();
    return url.href;
  }

  async function codeFromLetter(email: string, sent: number): Promise<string> {
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email), 30_000);
    return /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
  }

  /** Address and code; returns the page after the code (consent or the site). */
  async function signIn(page: Page, email: string, url: string): Promise<void> {
    await page.goto(url);
    // Signed in at the service already: no address asked.
    if (await page.getByLabel('Email address').count()) {
      const sent = h.smtp.letters.length;
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      const code = await codeFromLetter(email, sent);
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState();
    }
    if (await page.getByRole('button', { name: 'Allow', exact: true }).count()) {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
    }
    await page.waitForURL((u) => u.href.startsWith(site.origin));
  }

  /** The notice after a console action: announced as a status, and within the viewport at 390 px. */
  async function expectNoticeInView(page: Page, text: string): Promise<void> {
    const notice = page.getByRole('status');
    await notice.waitFor();
    expect(await notice.innerText()).to.equal(text);
    const box = await notice.boundingBox();
    expect(box, 'the notice has a box').to.not.equal(null);
    expect(box!.y, `notice top ${box!.y} within the viewport`).to.be.at.least(0);
    expect(box!.y + box!.height, 'notice bottom within the viewport').to.be.at.most(PHONE.height);
  }

  /** Each word (a run of letters and digits) on one line: long names and hosts wrap between words or at dots and hyphens, never inside a word. */
  async function wordsWhole(page: Page, selector: string): Promise<void> {
    const split = await page.evaluate(`(() => {
      const out = [];
      for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const m of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            if (tops.size > 1) out.push(m[0]);
          }
        }
      }
      return out;
    })()`) as string[];
    expect(split, `words broken across lines in ${selector}`).to.deep.equal([]);
  }

  it('walks sign-in, the code step, consent, the console, a site\'s page, Remove access, devices, Block site, organizations, unsubscribe, sign-out and the error pages', async () => {
    const from = mark(chromium.log);
    const page = chromium.context.pages()[0] ?? await chromium.context.newPage();
    const log = chromium.log;

    // Sign-in: the ways in (the address, a passkey, the upstream), the
    // passkey sign-up, an upstream that refuses; then the code step with its
    // errors, a new code, consent.
    await step(log, 'login page', () => page.goto(authorizationUrl(client)));
    await page.getByRole('button', { name: t('en', 'login.passkey') }).waitFor();
    expect(await page.getByRole('button', { name: t('en', 'login.upstream', { name: UPSTREAM }) }).isVisible()).to.equal(true);
    await check(page, 'login');
    await page.getByRole('link', { name: t('en', 'login.passkey_signup') }).click();
    await page.getByRole('heading', { level: 1, name: t('en', 'passkey.signup.title') }).waitFor();
    await check(page, 'passkey sign-up');
    await page.getByRole('link', { name: t('en', 'passkey.signup.back') }).click();
    await page.getByRole('button', { name: t('en', 'login.upstream', { name: UPSTREAM }) }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('#signin-error').waitFor();
    expect(await page.locator('#signin-error').innerText()).to.equal(t('en', 'upstream.error.denied', { name: UPSTREAM }));
    await check(page, 'login, the upstream refused');
    let sent = h.smtp.letters.length;
    await page.getByLabel('Email address').fill(ADMIN);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    const first = await codeFromLetter(ADMIN, sent);
    await check(page, 'code');
    const wrong = String((Number(first) + 1) % 1_000_000).padStart(6, '0');
    for (let left = 4; left >= 1; left -= 1) {
      await page.getByLabel('6-digit code').fill(wrong);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The error sits on the code field, says how many attempts are left, and is in view.
      const field = page.getByLabel('6-digit code');
      expect(await field.getAttribute('aria-invalid')).to.equal('true');
      expect(await page.locator('#code-error').innerText()).to.equal(t('en', 'code.error.invalid', { count: left }));
      const box = (await page.locator('#code-error').boundingBox())!;
      expect(box.y + box.height).to.be.at.most(PHONE.height);
    }
    await check(page, 'code, wrong');
    await page.getByLabel('6-digit code').fill(wrong);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(await page.locator('#code-error').innerText()).to.equal(t('en', 'code.error.used_up'));
    expect(await page.getByLabel('6-digit code').count()).to.equal(0);
    await check(page, 'code, used up');
    sent = h.smtp.letters.length;
    await page.getByRole('button', { name: 'Send a new code' }).click();
    const fresh = await codeFromLetter(ADMIN, sent);
    expect(await page.getByRole('status').innerText()).to.include('We sent a new code to');
    await page.getByLabel('6-digit code').fill(fresh);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `${SITE_NAME} wants to access your account` }).waitFor();
    await check(page, 'consent');
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.waitForURL((u) => u.href.startsWith(`${client.redirect_uris![0]}?`));

    // prompt=select_account
    await page.goto(authorizationUrl(client, { prompt: 'select_account' }));
    await page.getByRole('heading', { level: 1, name: 'Choose an account' }).waitFor();
    await check(page, 'select account');
    await page.getByRole('button', { name: `Continue as ${ADMIN}` }).click();
    await page.waitForURL((u) => u.href.startsWith(site.origin));

    // A site asks for a passkey over the emailed code's sign-in: the passkey only, and the way back.
    await page.goto(authorizationUrl(client, { acr_values: 'phr' }));
    await page.getByRole('button', { name: t('en', 'login.passkey') }).waitFor();
    await check(page, 'login, a passkey asked for');

    // The console with a message, a sender, a site of an organization.
    await signIn(page, ADMIN, authorizationUrl(intranet));
    const sub = (await h.reference.accounts.findByEmail(ADMIN))!.accountId;
    for (const title of ['Your order 1042 has shipped', 'Your invoice is ready']) {
      const res = await fetch(`${h.issuer}/api/notify`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sub, category: 'transactional', title, body: 'Thank you for shopping with us. Tracking: NW-1042-XYZ.', url: 'https://northwind-shop-outfitters-international.example/orders/1042' }),
      });
      expect(res.status).to.equal(202);
    }
    await page.goto(`${h.issuer}/console`);
    await page.getByRole('heading', { level: 1, name: 'Your console' }).waitFor();
    await check(page, 'console');
    await wordsWhole(page, '.item-name h3, .host, .site-name');
    await saveScreenshot(page, 'pages-console-390.png');

    // Passkeys (Chromium's virtual authenticator) and linked accounts.
    const cdp = await chromium.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const passkeys = page.getByRole('region', { name: t('en', 'console.passkeys.title') });
    await passkeys.getByLabel(t('en', 'console.passkeys.new_name')).fill('The administrator’s very own phone with a long name');
    await passkeys.getByRole('button', { name: t('en', 'console.passkeys.add') }).click();
    await expectNoticeInView(page, t('en', 'console.passkeys.notice.added'));
    await check(page, 'console, passkey added');
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    await passkeys.getByRole('link', { name: /^Remove / }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check(page, 'remove passkey confirmation');
    await page.getByRole('link', { name: t('en', 'console.cancel') }).click();
    await page.getByRole('region', { name: t('en', 'console.upstreams.title') }).getByRole('button', { name: t('en', 'console.upstreams.link', { name: UPSTREAM }) }).click();
    await page.getByLabel('Who').fill('admin-at-social');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expectNoticeInView(page, t('en', 'console.upstreams.notice.linked'));
    await check(page, 'console, account linked');
    await page.goto(`${h.issuer}/console`);

    // Notices where the eyes are, after each action.
    const senders = page.getByRole('region', { name: 'Senders' });
    await senders.getByRole('button', { name: 'Save' }).first().click();
    await expectNoticeInView(page, t('en', 'console.notice.saved'));
    await check(page, 'console, saved');
    await page.getByRole('button', { name: 'Mark as read' }).first().click();
    await expectNoticeInView(page, t('en', 'console.notice.read'));
    await page.getByRole('button', { name: 'Delete' }).first().click();
    await expectNoticeInView(page, t('en', 'console.notice.deleted'));
    await page.getByRole('button', { name: 'Save' }).last().click();
    await expectNoticeInView(page, t('en', 'console.notice.language'));

    // A site's own page, Remove access from there with its confirmation, and the one for all sites.
    await page.getByRole('link', { name: `About ${SITE_NAME}` }).click();
    await page.getByRole('heading', { level: 1, name: SITE_NAME }).waitFor();
    await check(page, 'site detail');
    await wordsWhole(page, 'h1, .host');
    await page.getByRole('link', { name: `Remove access of ${SITE_NAME}…` }).click();
    await page.getByRole('heading', { level: 1, name: `Remove the access of ${SITE_NAME}?` }).waitFor();
    await check(page, 'remove access confirmation');
    await page.getByRole('button', { name: 'Remove access', exact: true }).click();
    await expectNoticeInView(page, t('en', 'console.notice.access_removed'));
    await check(page, 'site detail, access removed');
    await saveScreenshot(page, 'pages-site-detail-390.png');
    await page.goto(`${h.issuer}/console/remove-access`);
    await page.getByRole('heading', { level: 1, name: t('en', 'console.remove_all.title') }).waitFor();
    await check(page, 'remove all access confirmation');

    // Where the person is signed in: a second browser, signed out from this one.
    const other = await chromium.newContext({ viewport: PHONE });
    try {
      await signIn(await other.newPage(), ADMIN, authorizationUrl(intranet));
    } finally {
      await other.close();
    }
    await page.goto(`${h.issuer}/console`);
    await page.getByRole('link', { name: t('en', 'console.devices.open') }).click();
    await page.getByRole('heading', { level: 1, name: t('en', 'console.sessions.title') }).waitFor();
    expect(await page.getByRole('heading', { level: 3 }).count()).to.equal(2);
    await check(page, 'sessions');
    await saveScreenshot(page, 'pages-sessions-390.png');
    await page.getByRole('link', { name: t('en', 'console.sessions.end_others') }).click();
    await page.getByRole('heading', { level: 1, name: t('en', 'console.end_others.title') }).waitFor();
    await check(page, 'sign out everywhere else confirmation');
    await page.goto(`${h.issuer}/console/sessions/end-all`);
    await check(page, 'sign out everywhere confirmation');
    await page.goto(`${h.issuer}/console/sessions`);
    await page.getByRole('button', { name: t('en', 'console.sessions.sign_out') }).click();
    await expectNoticeInView(page, t('en', 'console.notice.signed_out'));
    await check(page, 'sessions, signed out of the other');
    expect(await page.getByRole('heading', { level: 3 }).count()).to.equal(1);

    await page.goto(`${h.issuer}/console#sites`);
    await page.getByRole('link', { name: `Block ${SITE_NAME}…` }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check(page, 'block confirmation');
    await page.getByRole('button', { name: `Block ${SITE_NAME}` }).click();
    await expectNoticeInView(page, t('en', 'console.notice.blocked'));

    // The blocked site's sign-in page; Cancel first.
    await page.goto(authorizationUrl(client));
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check(page, 'blocked site');
    const buttons = await page.getByRole('button').allInnerTexts();
    expect(buttons).to.deep.equal(['Cancel', 'Unblock and continue']);
    await page.getByRole('button', { name: 'Unblock and continue' }).click();
    await page.waitForLoadState();
    if (await page.getByRole('button', { name: 'Allow', exact: true }).count()) await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.waitForURL((u) => u.href.startsWith(site.origin));

    // Organizations: the members page and the removal's confirmation.
    await page.goto(`${h.issuer}/console/orgs/acme`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check(page, 'organization members');
    const memberId = (await h.reference.accounts.findByEmail(MEMBER))!.accountId;
    await page.goto(`${h.issuer}/console/orgs/acme/members/${memberId}/remove`);
    await check(page, 'remove member confirmation');
    await page.getByRole('button', { name: /^Remove / }).click();
    await expectNoticeInView(page, t('en', 'console.org.notice.removed'));
    await check(page, 'organization members, removed');

    // Unsubscribe: the letter's link, its answer, a broken link.
    const letter = h.smtp.letters.find((l) => l.subject === 'Your invoice is ready')!;
    const unsubscribe = /<(http[^>]+)>/.exec(letter.headerLines.find((l) => l.key === 'list-unsubscribe')!.line)![1]!;
    await page.goto(unsubscribe);
    await check(page, 'unsubscribe');
    await page.getByRole('button', { name: t('en', 'notify.stop') }).click();
    await page.getByRole('heading', { level: 1, name: t('en', 'unsubscribe.email_off.title') }).waitFor();
    await check(page, 'unsubscribed');
    await page.goto(`${h.issuer}/unsubscribe/not-a-token`);
    await check(page, 'unsubscribe, invalid link');

    // Error and not-found pages.
    await page.goto(`${h.issuer}/console/callback?error=access_denied&error_description=Call+0800`);
    await check(page, 'console callback error');
    await page.goto(`${h.issuer}/console/nothing-here`);
    await check(page, 'not found');
    await page.goto(`${h.issuer}/auth?client_id=nobody`);
    await check(page, 'authorization error');

    // Sign-out: the question, "Stay signed in" and its page; then "Sign out" and its page.
    await page.goto(`${h.issuer}/session/end?client_id=walk`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check(page, 'sign-out question');
    await page.getByRole('button', { name: 'Stay signed in' }).click();
    await page.getByRole('heading', { level: 1, name: t('en', 'stayed.title') }).waitFor();
    expect(await page.locator('main').innerText()).to.include(t('en', 'stayed.body', { serviceName: 'Sign-in service' }));
    expect(await page.getByRole('link', { name: t('en', 'stayed.console') }).getAttribute('href')).to.equal(`${h.issuer}/console`);
    await check(page, 'stayed signed in');
    await page.goto(`${h.issuer}/session/end`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
    await check(page, 'signed out');

    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
    const issues = found.splice(0);
    expect(issues, issues.join('\n')).to.deep.equal([]);
  });

  it('a member: the organization page, the console and the sign-out without a question, checked alike', async () => {
    const context: BrowserContext = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      // A real code + PKCE sign-in, so the site holds an ID token to send as the hint.
      const config = await oidc.discovery(new URL(h.issuer), intranet.client_id, { client_secret: intranet.client_secret }, oidc.ClientSecretBasic(intranet.client_secret!), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      await signIn(page, 'second.member@walk.example', authorizationUrl(intranet, { state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier) }));
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
      await page.goto(`${h.issuer}/console/orgs/acme`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await check(page, 'organization, as a member');
      await page.goto(`${h.issuer}/console`);
      await check(page, 'console, a member');
      // The sign-out page that submits itself, held still to be checked: served as it is, less its one script.
      await page.route(/\/session\/end\?/, async (route) => {
        const served = await route.fetch();
        const body = await served.text();
        expect(body).to.include('<script>');
        await route.fulfill({ response: served, body: body.replace(/<script>[^<]*<\/script>/, '') });
      });
      await page.goto(`${h.issuer}/session/end?id_token_hint=${tokens.id_token}`);
      await page.getByRole('heading', { level: 1, name: t('en', 'logout.auto') }).waitFor();
      await check(page, 'sign-out without a question');
    } finally {
      await context.close();
    }
    const issues = found.splice(0);
    expect(issues, issues.join('\n')).to.deep.equal([]);
  });

  it('without JavaScript, a console action\'s notice is in view', async () => {
    const context = await chromium.newContext({ viewport: PHONE, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await signIn(page, 'nojs@walk.example', authorizationUrl(client));
      await page.goto(`${h.issuer}/console`);
      await page.getByRole('region', { name: 'Senders' }).getByRole('button', { name: 'Save' }).first().click();
      await expectNoticeInView(page, t('en', 'console.notice.saved'));
      await page.getByRole('button', { name: 'Save' }).last().click();
      await expectNoticeInView(page, t('en', 'console.notice.language'));
    } finally {
      await context.close();
    }
  });
});
