/**
 * OpenID Foundation conformance, "RP-Initiated OP" plan
 * (oidcc-rp-initiated-logout-certification-test-plan): discovery and the
 * modules that sign out, through HTTP against the reference provider over
 * TLS. Each `it` is one of the suite's modules, named by its testName; the
 * suite's source says what each sends and checks (docs/testing.md,
 * "Conformance"). The modules that must not return to the site are in
 * ./rp-initiated-logout-refusals.test.ts.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import type { Agent, Response } from '../helpers/agent.ts';
import {
  discoveryWithHttpsEndpoints, endSessionState, endSessionStateWithPunctuation, endSessionUrl, expectAsked, expectPostLogoutRedirect, expectPromptNoneFails,
  expectSignsOutWithoutQuestion, followWithoutSite, heading, pressSignOut, RP_PLAN, startSuiteSite, suiteClient, suiteSignIn,
} from '../helpers/conformance.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

// The suite's base URL for this client; the provider never calls it (no back-channel here).
const site = suiteClient('oidf-rp', 'https://127.0.0.1:9/test/a/oidc-signout-notify');

describe(`${RP_PLAN} (RP-Initiated OP)`, () => {
  let h: Harness;
  let config: oidc.Configuration;

  setUp(() => startSuiteSite('conformance-rp', site), (started) => ({ h, config } = started));

  /** ExpectSuccessfulLogoutPage: the service's "you are signed out" page, never the site. */
  async function expectSignedOutPage(agent: Agent, confirmed: Response, siteMeta: ClientMetadata) {
    const done = await followWithoutSite(agent, confirmed, siteMeta, 'OP has incorrectly called the registered post_logout_redirect_uri when it wasn\'t in the request.');
    expect(done.status).to.equal(200);
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    expect(heading(done)).to.equal(escapeHtml(t('en', 'signedout.title')));
    expect(done.body).to.not.include(t('en', 'signedout.rejected'));
  }

  it('oidcc-rp-initiated-logout-discovery-endpoint-verification', async () => {
    const doc = await discoveryWithHttpsEndpoints(h);
    // The endpoints the check went through: every one oidc-provider and the plugin publish.
    expect(Object.keys(doc).filter((k) => k.endsWith('_endpoint')).length).to.be.above(5);
  });

  it('oidcc-rp-initiated-logout', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-logout@example.com');
    const state = endSessionStateWithPunctuation();
    // 50 letters, 10 digits, 30 VSCHAR punctuation less `+`, space and `;`.
    expect(state).to.match(/^[A-Za-z]{50}[0-9]{10}[\x21-\x2A\x2C-\x2F\x3A\x3C-\x40\x5B-\x60\x7B-\x7E]{30}$/);
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, post_logout_redirect_uri: site.post_logout_redirect_uris![0]!, state }));
    expectSignsOutWithoutQuestion(page);
    const res = await pressSignOut(agent, page);
    expectPostLogoutRedirect(res, site, state);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  });

  it('oidcc-rp-initiated-logout-no-state', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-no-state@example.com');
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, post_logout_redirect_uri: site.post_logout_redirect_uris![0]! }));
    expectSignsOutWithoutQuestion(page);
    const res = await pressSignOut(agent, page);
    expectPostLogoutRedirect(res, site, undefined);
    expect(res.location).to.equal(site.post_logout_redirect_uris![0]);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  });

  it('oidcc-rp-initiated-logout-no-post-logout-redirect-uri', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-no-uri@example.com');
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, state: endSessionState() }));
    expectSignsOutWithoutQuestion(page);
    await expectSignedOutPage(agent, await pressSignOut(agent, page), site);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  });

  it('oidcc-rp-initiated-logout-no-params', async () => {
    const { agent } = await suiteSignIn(h, config, site, 'rp-no-params@example.com');
    const page = await agent.get(endSessionUrl(h, {}));
    expectAsked(page, 'rp-no-params@example.com');
    await expectSignedOutPage(agent, await pressSignOut(agent, page), site);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  });

  it('oidcc-rp-initiated-logout-only-state', async () => {
    const { agent } = await suiteSignIn(h, config, site, 'rp-only-state@example.com');
    const page = await agent.get(endSessionUrl(h, { state: endSessionState() }));
    expectAsked(page, 'rp-only-state@example.com');
    await expectSignedOutPage(agent, await pressSignOut(agent, page), site);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  });
});
