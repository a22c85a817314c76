/**
 * The pages an organization's member (not its administrator) reaches, walked in Chromium at
 * 390 px and on a desktop: axe-core finds no serious or critical violation (the sign-out that
 * submits itself held still to be checked).
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { BrowserContext } from 'playwright-core';

import { t } from '../../src/i18n/index.ts';
import { PHONE } from '../helpers/axe.ts';
import type { Chromium } from '../helpers/browser.ts';
import { pageWalkSteps, startPageWalk } from '../helpers/page-walk.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('every page a person can reach, in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(300_000);

  let h: Harness;
  let intranet: ClientMetadata;
  let chromium: Chromium;
  let found: string[];

  const world = setUp(() => startPageWalk('pages-member-browser'), (started) => ({ h, intranet, chromium, found } = started));
  const { check, authorizationUrl, signIn } = pageWalkSteps(world);

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
});
