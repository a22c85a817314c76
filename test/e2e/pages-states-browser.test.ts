/**
 * States of pages the walk in pages-browser.test.ts passes through without
 * stopping: a sign-in refused by a limit, consent that asks for offline
 * access, a wrong code, and the sign-out page that asks nothing as a browser
 * without JavaScript renders it. Each checked with axe-core at 390 px and on
 * a desktop, and for sideways scrolling.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t } from '../../src/i18n/index.ts';
import { checkPage, PHONE } from '../helpers/axe.ts';
import { launchChromium, startSiteServer, step, type Chromium, type SiteServer } from '../helpers/browser.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';

describe('page states a person meets, in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(120_000);

  let site: SiteServer;
  let h: Harness;
  let client: ClientMetadata;
  let chromium: Chromium;

  before(async () => {
    site = await startSiteServer();
    client = siteClient('states', {
      client_name: 'Northwind Shop', redirect_uris: [`${site.origin}/states/callback`],
      post_logout_redirect_uris: [`${site.origin}/states/signed-out`], backchannel_logout_session_required: false,
    });
    // One code per address and window: the second request is refused.
    h = await startHarness('pages-states', {
      clients: [client],
      loginCodeLimits: { ...defaultLoginCodeLimits, perAddress: { limit: 1, windowMs: 15 * 60_000 } },
    });
    chromium = await launchChromium({ viewport: PHONE });
  });
  after(async () => {
    for (const close of [() => chromium?.close(), () => h?.close(), () => site?.close()]) await close().catch(() => {});
  });

  async function check(page: Page, label: string): Promise<void> {
    const problems = await step(chromium.log, `check ${label}`, () => checkPage(page, label));
    expect(problems, problems.join('\n')).to.deep.equal([]);
  }

  function authorizationUrl(params: Record<string, string> = {}): string {
    const url = new URL('/auth', h.issuer);
    url.search = new URLSearchParams({
      client_id: client.client_id, response_type: 'code', redirect_uri: client.redirect_uris![0]!, scope: 'openid email',
      state: oidc.randomState(), code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...params,
    }).toString();
    return url.href;
  }

  async function codeFor(email: string, sent: number): Promise<string> {
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email), 30_000);
    return /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
  }

  it('a wrong code, then a code request refused by the address limit', async () => {
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(authorizationUrl());
      const sent = h.smtp.letters.length;
      await page.getByLabel('Email address').fill('limited@example.com');
      await page.getByRole('button', { name: 'Send me a code' }).click();
      const code = await codeFor('limited@example.com', sent);
      await page.getByLabel('6-digit code').fill(code === '000000' ? '111111' : '000000');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('6-digit code').waitFor();
      expect(await page.locator('.error, [role="alert"]').count(), 'an error is shown').to.be.above(0);
      await check(page, 'code step after a wrong code');

      // A new browser asks again for the same address: over the limit.
      const other = await (await chromium.newContext({ viewport: PHONE })).newPage();
      await other.goto(authorizationUrl());
      await other.getByLabel('Email address').fill('limited@example.com');
      await other.getByRole('button', { name: 'Send me a code' }).click();
      await other.waitForLoadState();
      expect(await other.content()).to.include('Too many codes were sent to this address');
      await check(other, 'login refused by the address limit');
      await other.context().close();
    } finally {
      await context.close();
    }
  });

  it('consent for offline access, and the sign-out page that asks nothing as it renders without JavaScript', async () => {
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const config = await oidc.discovery(new URL(h.issuer), client.client_id, { client_secret: client.client_secret },
        oidc.ClientSecretBasic(client.client_secret!), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      await page.goto(authorizationUrl({ scope: 'openid email offline_access', prompt: 'consent', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier) }));
      const sent = h.smtp.letters.length;
      await page.getByLabel('Email address').fill('offline@example.com');
      await page.getByRole('button', { name: 'Send me a code' }).click();
      await page.getByLabel('6-digit code').fill(await codeFor('offline@example.com', sent));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Allow', exact: true }).waitFor();
      await check(page, 'consent with offline access');
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL((u) => u.href.startsWith(site.origin));
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });

      // As without JavaScript: its one script not run, its <noscript> content shown (the Continue button).
      await page.route(/\/session\/end\?/, async (route) => {
        const served = await route.fetch();
        const body = await served.text();
        expect(body).to.match(/<noscript>[\s\S]*<button/);
        await route.fulfill({ response: served, body: body.replace(/<script>[^<]*<\/script>/, '').replace(/<\/?noscript>/g, '') });
      });
      await page.goto(`${h.issuer}/session/end?id_token_hint=${tokens.id_token}`);
      await page.getByRole('button', { name: t('en', 'logout.continue') }).waitFor();
      await check(page, 'sign-out without a question, without JavaScript');
    } finally {
      await context.close();
    }
  });
});
