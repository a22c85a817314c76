/**
 * OpenID Foundation conformance, "RP-Initiated OP" plan: the five modules
 * where the provider must never send the browser to the site's
 * post_logout_redirect_uri, and must show an error or ask the person. The
 * service asks (or, for a hint that names this person, signs out on its own
 * page) and ends on its signed-out page, which says the return address was
 * not accepted; the person's session ends once they press "Sign out".
 */
import { expect } from 'chai';
import { decodeJwt, SignJWT } from 'jose';
import type * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import type { Agent, Response } from '../helpers/agent.ts';
import {
  endSessionState, endSessionUrl, expectAsked, expectPromptNoneFails, expectSignsOutWithoutQuestion, followWithoutSite,
  heading, pressSignOut, RP_PLAN, startSuiteSite, suiteClient, suiteSignIn,
} from '../helpers/conformance.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

const BASE = 'https://127.0.0.1:9/test/a/oidc-signout-notify';
const site = suiteClient('oidf-rp-refusals', BASE);
const registered = site.post_logout_redirect_uris![0]!;

describe(`${RP_PLAN} (RP-Initiated OP): no return to the site`, () => {
  let h: Harness;
  let config: oidc.Configuration;

  setUp(() => startSuiteSite('conformance-rp-refusals', site), (started) => ({ h, config } = started));

  /**
   * The person signs out on the service's page; the browser never reaches the
   * site (the suite fails the module with `why` if it does), the signed-out
   * page says the return address was not used, and prompt=none proves the
   * session ended.
   */
  async function expectSignedOutWithoutReturn(agent: Agent, page: Response, why: string) {
    const done = await followWithoutSite(agent, await pressSignOut(agent, page), site, why);
    expect(done.status).to.equal(200);
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    expect(heading(done)).to.equal(escapeHtml(t('en', 'signedout.title')));
    expect(done.body).to.include(escapeHtml(t('en', 'signedout.rejected')));
    expect(done.body).to.not.include(BASE);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
  }

  it('oidcc-rp-initiated-logout-no-id-token-hint', async () => {
    const { agent } = await suiteSignIn(h, config, site, 'rp-no-hint@example.com');
    // RemoveIdTokenHintFromEndSessionEndpointRequest: the registered address and state, and no client_id either.
    const page = await agent.get(endSessionUrl(h, { post_logout_redirect_uri: registered, state: endSessionState() }));
    expectAsked(page, 'rp-no-hint@example.com');
    await expectSignedOutWithoutReturn(agent, page, 'OP has incorrectly called the registered post_logout_redirect_uri even though no id_token_hint was provided.');
  });

  it('oidcc-rp-initiated-logout-bad-id-token-hint', async () => {
    const { agent } = await suiteSignIn(h, config, site, 'rp-bad-hint@example.com');
    // GenerateFakeIdTokenClaims + SignFakeIdToken: "issued" by the client (iss and aud swapped), HS256
    // with a key made of the client secret (GenerateJWKsFromClientSecret), no kid.
    const fake = await new SignJWT({ sub: 'SubjectID', nonce: 'flibble' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(site.client_id).setAudience(h.issuer)
      .setIssuedAt().setExpirationTime('5m')
      .sign(new TextEncoder().encode(site.client_secret!));
    const page = await agent.get(endSessionUrl(h, { id_token_hint: fake, post_logout_redirect_uri: registered, state: endSessionState() }));
    expectAsked(page, 'rp-bad-hint@example.com');
    await expectSignedOutWithoutReturn(agent, page, 'OP has incorrectly called the registered post_logout_redirect_uri even though an invalid id_token_hint was provided.');
  });

  it('oidcc-rp-initiated-logout-modified-id-token-hint', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-alg-none@example.com');
    // ChangeIdTokenToAlgNone: the real ID token's payload under {"alg": "none"}, with an empty signature.
    const none = `${Buffer.from('{"alg": "none"}').toString('base64url')}.${idToken.split('.')[1]}.`;
    expect(decodeJwt(none).sub).to.equal(decodeJwt(idToken).sub);
    const page = await agent.get(endSessionUrl(h, { id_token_hint: none, post_logout_redirect_uri: registered, state: endSessionState() }));
    expectAsked(page, 'rp-alg-none@example.com');
    await expectSignedOutWithoutReturn(agent, page, 'OP has incorrectly called the registered post_logout_redirect_uri even though an invalid id_token_hint was provided.');
  });

  it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-bad-uri@example.com');
    // AddBadPostLogoutRedirectUriToEndSessionEndpointRequest: an address under the suite's base URL it never registered.
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, post_logout_redirect_uri: `${BASE}/bad_post_logout_redirect_uri`, state: endSessionState() }));
    // The hint names this person and session: no question, the service's own page signs out.
    expectSignsOutWithoutQuestion(page);
    await expectSignedOutWithoutReturn(agent, page, 'OP has incorrectly called the registered post_logout_redirect_uri even though a different uri was requested.');
  });

  it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri', async () => {
    const { agent, idToken } = await suiteSignIn(h, config, site, 'rp-query-added@example.com');
    // AddPostLogoutRedirectUriWithQueryAddedToEndSessionEndpointRequest: exact match or nothing.
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, post_logout_redirect_uri: `${registered}?foo=bar`, state: endSessionState() }));
    expectSignsOutWithoutQuestion(page);
    await expectSignedOutWithoutReturn(agent, page, 'OP has incorrectly called the registered post_logout_redirect_uri even though a different uri was requested.');
  });
});
