/**
 * OpenID Foundation conformance, "Back-Channel OP" plan
 * (oidcc-backchannel-rp-initiated-logout-certification-test-plan), through
 * HTTP against the reference provider over TLS. The site's back-channel
 * endpoint is HTTPS too, with the same throwaway certificate, which the
 * provider's outgoing requests trust through its `fetch` (and nothing else
 * in the process does).
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type * as oidc from 'openid-client';

import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import {
  BACKCHANNEL_PLAN, discoveryWithHttpsEndpoints, endSessionStateWithPunctuation, endSessionUrl, expectPostLogoutRedirect,
  expectPromptNoneFails, expectSignsOutWithoutQuestion, pressSignOut, startSuiteHarness, suiteClient, suiteSignIn,
} from '../helpers/conformance.ts';
import { expectSuiteValidLogoutToken } from '../helpers/logout-token.ts';
import { discover, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { throwawayTls } from '../helpers/tls.ts';

describe(`${BACKCHANNEL_PLAN} (Back-Channel OP)`, () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let site: ClientMetadata;
  let config: oidc.Configuration;

  setUp(async () => {
    const tls = await throwawayTls();
    // CreateBackchannelLogoutUri: <base>/backchannel_logout, beside the suite's other addresses.
    const rp = await startReceiver({ tls, path: '/test/a/oidc-signout-notify/backchannel_logout' });
    site = suiteClient('oidf-bc', rp.url.replace(/\/backchannel_logout$/, ''), {
      backchannel_logout_uri: rp.url,
      backchannel_logout_session_required: true,
    });
    const harness = await startSuiteHarness('conformance-bc', [site], {
      tls,
      allowPrivateFetchHosts: ['127.0.0.1'],
      // The plugin takes oidc-provider's guarded pool away for a listed host; this one trusts the site's certificate.
      fetch: (url, init) => globalThis.fetch(url, { ...init, dispatcher: init?.dispatcher ?? tls.dispatcher }),
    });
    config = await discover(harness, site);
    return { harness, rp, close: async () => { await harness.close(); await rp.close(); } };
  }, (started) => { h = started.harness; receiver = started.rp; });

  it('oidcc-backchannel-logout-discovery-endpoint-verification', async () => {
    const doc = await discoveryWithHttpsEndpoints(h);
    // CheckDiscEndpointBackchannelLogoutSupported, CheckDiscEndpointBackchannelLogoutSessionSupported: booleans, true.
    expect(doc.backchannel_logout_supported, 'backchannel_logout_supported must be: true').to.equal(true);
    expect(doc.backchannel_logout_session_supported, 'backchannel_logout_session_supported must be: true').to.equal(true);
  });

  it('oidcc-backchannel-rp-initiated-logout', async () => {
    const { agent, idToken, claims } = await suiteSignIn(h, config, site, 'bc-logout@example.com');
    // backchannel_logout_session_required: the ID token carries the sid the logout token will name.
    expect(claims.sid).to.be.a('string');
    const state = endSessionStateWithPunctuation();
    const page = await agent.get(endSessionUrl(h, { id_token_hint: idToken, post_logout_redirect_uri: site.post_logout_redirect_uris![0]!, state }));
    expectSignsOutWithoutQuestion(page);
    const res = await pressSignOut(agent, page);

    // Both arrive, the back-channel request and the redirect: the site that asked gets its own logout token.
    expect(receiver.requests, 'one back-channel logout request').to.have.length(1);
    const [request] = receiver.requests;
    expect(request!.method).to.equal('POST');
    expect(request!.contentType).to.match(/^application\/x-www-form-urlencoded\b/);
    // EnsureIncomingTls12WithSecureCipherOrTls13 and EnsureIncomingTls13 (warnings in the suite).
    expect(request!.tls?.protocol).to.equal('TLSv1.3');
    // ExtractLogoutTokenFromBackchannelLogoutRequest, CheckForUnexpectedParametersInBackchannelLogoutRequest.
    expect([...request!.form.keys()], 'backchannel_logout_request includes only expected parameters').to.deep.equal(['logout_token']);
    const logoutToken = await expectSuiteValidLogoutToken(h, request!.form.get('logout_token')!, site.client_id, claims);
    expect(logoutToken.sid, 'sid, as the site registered backchannel_logout_session_required').to.equal(claims.sid);

    expectPostLogoutRedirect(res, site, state);
    expect(await expectPromptNoneFails(h, config, site, agent)).to.equal('login_required');
    expect(receiver.requests, 'nothing more after the sign-out').to.have.length(1);
  });
});
