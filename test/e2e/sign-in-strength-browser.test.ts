/**
 * A passkey sign-in's strength for sites, in Chromium with its virtual
 * authenticator against the reference provider on http://localhost:
 * `acr_values=phr` over an emailed-code session asks for the passkey (and
 * only the passkey), and the ID token and introspection of the access and
 * refresh tokens then say acr phr, amr hwk user mfa (RFC 8176) and the new
 * auth_time; an essential phr is then met; `max_age=0` asks again.
 * openid-client is the site.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';

import { ACR } from '../../examples/reference/strength.ts';
import { t } from '../../src/i18n/index.ts';
import { step, type Chromium } from '../helpers/browser.ts';
import { startPasskeyBench, typeEmailedCode, withoutAutofill, type PasskeyBench } from '../helpers/passkeys.ts';
import { type Harness } from '../helpers/reference.ts';
import { startResourceServer } from '../helpers/resource-server.ts';

describe('a passkey sign-in\'s strength in Chromium: acr phr, amr, auth_time; acr_values and max_age', function () {
  this.timeout(180_000);

  let bench: PasskeyBench | undefined;
  let h: Harness;
  let config: oidc.Configuration;
  let chromium: Chromium;

  before(async () => {
    bench = await startPasskeyBench('strength-browser', 'strength-pk', 'Strong Shop');
    ({ h, config, chromium } = bench);
  });
  after(() => bench?.close());

  /** The site asks for a sign-in with `params`, the person does what `act` says on the service's pages, the site redeems the code. */
  async function signInAtSite(page: Page, params: Record<string, string>, act: () => Promise<void>) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: bench!.client.redirect_uris![0]!, scope: 'openid email', state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params,
    });
    await page.goto(url.href);
    await act();
    // Back at the site, or first the consent page (a new site for this person).
    const { origin } = bench!.site;
    const atSite = page.waitForURL((u) => u.href.startsWith(origin));
    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    await Promise.race([atSite, allow.waitFor().catch(() => undefined)]);
    if (!page.url().startsWith(origin)) await allow.click();
    await atSite;
    return oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
  }

  const claimsOf = (tokens: oidc.TokenEndpointResponseHelpers) => tokens.claims() as Record<string, unknown>;
  const strength = (c: Record<string, unknown>) => ({ acr: c.acr, amr: c.amr, auth_time: c.auth_time });
  const introspected = async (token: string) => strength(await oidc.tokenIntrospection(config, token) as unknown as Record<string, unknown>);
  async function pastSecond(s: unknown): Promise<void> {
    while (Math.floor(Date.now() / 1000) <= Number(s)) await new Promise((r) => setTimeout(r, 50));
  }

  it('steps up from an emailed code to a passkey on acr_values=phr, and every token says so', async () => {
    await bench!.inPage(async (page, auth) => {
      await withoutAutofill(page);

      // An emailed code first.
      const email = 'strength-pk@example.com';
      const byCode = await step(chromium.log, 'sign in by code', () => signInAtSite(page, {}, () => typeEmailedCode(page, h, email)));
      const code = strength(claimsOf(byCode));
      expect(code).to.deep.include({ acr: ACR.emailCode, amr: ['otp'] });

      // A passkey added in the console.
      await page.goto(`${h.issuer}/console`);
      const section = page.getByRole('region', { name: t('en', 'console.passkeys.title') });
      await section.getByRole('button', { name: t('en', 'console.passkeys.add') }).click();
      await page.locator('#notice').waitFor();
      expect(await auth.credentials()).to.have.length(1);
      await pastSecond(code.auth_time);

      // The site asks for the passkey level: only the passkey is offered.
      const byPasskey = await step(chromium.log, 'step up', () => signInAtSite(page, { acr_values: ACR.passkey }, async () => {
        await page.locator('#strength-notice').waitFor();
        expect(await page.locator('#strength-notice').innerText()).to.equal(t('en', 'login.strength.notice', { clientName: 'Strong Shop' }));
        expect(await page.getByLabel('Email address').count()).to.equal(0);
        await page.getByRole('button', { name: t('en', 'login.passkey') }).click();
      }));
      const passkey = strength(claimsOf(byPasskey));
      expect(claimsOf(byPasskey).sub).to.equal(claimsOf(byCode).sub);
      expect(passkey).to.deep.include({ acr: ACR.passkey, amr: ['hwk', 'user', 'mfa'] });
      expect(passkey.auth_time).to.be.above(Number(code.auth_time));
      expect(await introspected(byPasskey.access_token)).to.deep.equal(passkey);
      expect(await introspected(byPasskey.refresh_token!)).to.deep.equal(passkey);
      // The code sign-in's tokens keep theirs.
      expect(await introspected(byCode.access_token)).to.deep.equal(code);
      // The README's resource server lets the passkey's access token through, not the code's.
      const rs = await startResourceServer(config);
      try {
        expect(await rs.call(byPasskey.access_token)).to.deep.equal({ status: 200, challenge: null });
        expect((await rs.call(byCode.access_token)).status).to.equal(401);
      } finally {
        await rs.close();
      }

      // An essential phr is met now, without a page.
      const essential = await signInAtSite(page, { claims: JSON.stringify({ id_token: { acr: { essential: true, values: [ACR.passkey] } } }) }, async () => {});
      expect(strength(claimsOf(essential))).to.deep.equal(passkey);

      // max_age=0: the sign-in page again (every way offered), the passkey again, a later auth_time.
      await pastSecond(passkey.auth_time);
      const again = await step(chromium.log, 'max_age=0', () => signInAtSite(page, { max_age: '0' }, async () => {
        await page.getByLabel('Email address').waitFor();
        await page.getByRole('button', { name: t('en', 'login.passkey') }).click();
      }));
      const fresh = strength(claimsOf(again));
      expect(fresh).to.deep.include({ acr: ACR.passkey, amr: ['hwk', 'user', 'mfa'] });
      expect(fresh.auth_time).to.be.above(Number(passkey.auth_time));
      expect(await introspected(again.access_token)).to.deep.equal(fresh);
    });
  });
});
