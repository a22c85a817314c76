/**
 * A relying site's own calls to the service, raw (the bytes of each answer
 * kept), as a confidential site (HTTP Basic) or a public one (its client_id
 * in the body, no secret), and the person's browser at the console's JSON API
 * and at /session/end.
 */
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { forms, type Agent } from './agent.ts';
import { discover, siteClient, type Harness } from './reference.ts';

/** A public site (`token_endpoint_auth_method: none`): it proves nothing at the token endpoint but its client id; PKCE as always. */
export function publicSiteClient(clientId: string, extra: Partial<ClientMetadata> = {}): ClientMetadata {
  return siteClient(clientId, { token_endpoint_auth_method: 'none', client_secret: undefined, ...extra });
}

/** openid-client's configuration for a confidential or a public site. */
export function discoverSite(h: Harness, client: ClientMetadata): Promise<oidc.Configuration> {
  if (client.client_secret) return discover(h, client);
  return oidc.discovery(new URL(h.issuer), client.client_id, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
}

export interface RawAnswer {
  status: number;
  /** The body as sent, byte for byte. */
  text: string;
  /** The body parsed, `{}` when it is not a JSON object (revocation's empty 200). */
  json: Record<string, string>;
  headers: Headers;
}

/** The site's calls at the token, introspection and revocation endpoints. */
export function asSite(h: Harness, client: ClientMetadata) {
  async function post(path: string, params: Record<string, string>): Promise<RawAnswer> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    const body = new URLSearchParams(params);
    if (client.client_secret) headers.authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    else body.set('client_id', client.client_id);
    const res = await fetch(`${h.issuer}${path}`, { method: 'POST', headers, body });
    const text = await res.text();
    let json: Record<string, string> = {};
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') json = parsed as Record<string, string>;
    } catch {
      // Revocation answers 200 with an empty body.
    }
    return { status: res.status, text, json, headers: res.headers };
  }
  return {
    client,
    refresh: (refreshToken: string) => post('/token', { grant_type: 'refresh_token', refresh_token: refreshToken }),
    revoke: (token: string, hint: 'refresh_token' | 'access_token') => post('/token/revocation', { token, token_type_hint: hint }),
    introspect: (token: string, hint: 'refresh_token' | 'access_token') => post('/token/introspection', { token, token_type_hint: hint }),
    /** Whether introspection says the token is active (throws on anything but a 200). */
    async active(token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> {
      const res = await post('/token/introspection', { token, token_type_hint: hint });
      if (res.status !== 200) throw new Error(`introspection answered ${res.status}: ${res.text}`);
      return (res.json as { active?: boolean }).active === true;
    },
  };
}

export type SiteCalls = ReturnType<typeof asSite>;

/** The console's JSON API as the person's browser calls it from the service's own page. */
export async function consoleApi(h: Harness, agent: Agent, method: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: h.issuer });
  return { status: res.status, body: res.body ? JSON.parse(res.body) as unknown : undefined };
}

/**
 * The site sends the browser to /session/end with its ID token as the hint;
 * the browser goes through the page it gets (the form that submits itself,
 * or the question, answered "Sign out"). Returns the last answer (a 303).
 */
export async function signOutWithHint(h: Harness, agent: Agent, client: ClientMetadata, idToken: string) {
  const page = await agent.get(`${h.issuer}/session/end?${new URLSearchParams({
    id_token_hint: idToken, post_logout_redirect_uri: client.post_logout_redirect_uris![0]!, state: 'signed-out',
  })}`);
  const form = forms(page.body)[0];
  if (page.status !== 200 || !form) throw new Error(`/session/end answered ${page.status} without a form:\n${page.body.slice(0, 1000)}`);
  return agent.submit(page, form, { logout: 'yes' });
}
