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

import { t } from '../../src/i18n/index.ts';
import { PHONE } from '../helpers/axe.ts';
import { mark, problems, saveScreenshot, step, type Chromium, type SiteServer } from '../helpers/browser.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { ADMIN, MEMBER, pageWalkSteps, SITE_NAME, startPageWalk, UPSTREAM } from '../helpers/page-walk.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('every page a person can reach, in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(300_000);

  let h: Harness;
  let site: SiteServer;
  let client: ClientMetadata;
  let intranet: ClientMetadata;
  let chromium: Chromium;
  let found: string[];

  const world = setUp(() => startPageWalk('pages-browser'), (started) => ({ h, site, client, intranet, chromium, found } = started));
  const { check, authorizationUrl, signIn, codeFromLetter, expectNoticeInView, wordsWhole } = pageWalkSteps(world);

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
      const res = await documentedFetch(`${h.issuer}/api/notify`, {
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
    await page.getByRole('link', { name: t('en', 'console.devices.open'), exact: true }).click();
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
