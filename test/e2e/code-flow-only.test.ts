/**
 * RFC 9700 section 2.1.1 as the plugin sets it where the host has not
 * chosen: discovery offers the code flow only (response types, response
 * modes, grant types), implicit, hybrid and fragment requests are refused,
 * and PKCE (S256) is required of every client, confidential ones too.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, forms } from '../helpers/agent.ts';
import { RP, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('code-only');

describe('the code flow only, with PKCE for every client', () => {
  let h: Harness;
  before(async () => { h = await startHarness('code-only', { clients: [site] }); });
  after(() => h.close());

  it('lists response type code, response modes query and form_post, and no implicit grant in discovery (both documents)', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.WELL-KNOWN/openid-configuration/']) {
      const doc = await (await fetch(`${h.issuer}${path}`)).json() as Record<string, string[]>;
      expect(doc.response_types_supported, path).to.deep.equal(['code']);
      expect([...doc.response_modes_supported!].sort(), path).to.deep.equal(['form_post', 'query']);
      expect(doc.grant_types_supported, path).to.not.include('implicit');
      expect(doc.code_challenge_methods_supported, path).to.deep.equal(['S256']);
    }
  });

  /** The authorization request's answer: where the browser is sent and with what. */
  async function authorize(params: Record<string, string>) {
    const url = new URL(`${h.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: site.client_id, redirect_uri: `${RP}/code-only/callback`, scope: 'openid', state: 's1', ...params,
    }).toString();
    const res = await new Agent().get(url.href);
    const location = res.location ? new URL(res.location) : undefined;
    // A redirect (query or fragment), or form_post's self-submitting page.
    const answer = location
      ? new URLSearchParams(location.search || location.hash.slice(1))
      : new URLSearchParams(forms(res.body)[0]?.fields ?? {});
    return { status: res.status, location, error: answer.get('error'), description: answer.get('error_description') };
  }

  it('refuses a confidential client without PKCE: invalid_request back at the site', async () => {
    const res = await authorize({ response_type: 'code' });
    expect(res.location?.href.startsWith(`${RP}/code-only/callback`)).to.equal(true);
    expect([res.error, res.description]).to.deep.equal(['invalid_request', 'Authorization Server policy requires PKCE to be used for this request']);
  });

  it('refuses implicit and hybrid response types, and the fragment response mode', async () => {
    const pkce = { code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', nonce: 'n' };
    const modeRefused = ['invalid_request', 'requested response_mode is not allowed for this client or request'];
    const typeRefused = ['unsupported_response_type', 'unsupported response_type requested'];
    const cases: [Record<string, string>, string[]][] = [
      // Implicit and hybrid answer in the fragment by default: refused for that first.
      [{ response_type: 'id_token' }, modeRefused],
      [{ response_type: 'code id_token' }, modeRefused],
      [{ response_type: 'id_token', response_mode: 'form_post' }, typeRefused],
      [{ response_type: 'code id_token', response_mode: 'form_post' }, typeRefused],
      [{ response_type: 'none' }, typeRefused],
    ];
    for (const [params, expected] of cases) {
      const res = await authorize({ ...params, ...pkce });
      expect([res.error, res.description], JSON.stringify(params)).to.deep.equal(expected);
    }
    const fragment = await authorize({ response_type: 'code', response_mode: 'fragment', ...pkce });
    expect([fragment.error, fragment.description]).to.deep.equal(['invalid_request', 'requested response_mode is not allowed for this client or request']);
    const query = await authorize({ response_type: 'code', ...pkce });
    expect([query.status, query.error]).to.deep.equal([303, null]);
  });
});
