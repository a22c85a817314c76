/**
 * The OpenID Foundation conformance suite's logout plans, reproduced as plain
 * HTTP against the reference provider over TLS: what the suite sends (its
 * `state` values, its end-session request, its client) and what it checks
 * (the redirect, the pages, prompt=none afterwards). Names follow the
 * suite's conditions (openid-certification/conformance-suite,
 * src/main/java/net/openid/conformance/condition/client/).
 */
import { randomInt } from 'node:crypto';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, formFor, type Response } from './agent.ts';
import { discover, signIn, startHarness, type Harness } from './reference.ts';

export const RP_PLAN = 'oidcc-rp-initiated-logout-certification-test-plan';
export const BACKCHANNEL_PLAN = 'oidcc-backchannel-rp-initiated-logout-certification-test-plan';

const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');
const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGIT = '0123456789';
const range = (from: string, to: string) => Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => String.fromCharCode(from.charCodeAt(0) + i)).join('');
/** VSCHAR punctuation: 0x20-0x2F, 0x3A-0x40, 0x5B-0x60, 0x7B-0x7E (RFC6749AppendixASyntaxUtils.generateVSChar). */
const PUNCT = range(' ', '/') + range(':', '@') + range('[', '`') + range('{', '~');

/**
 * CreateRandomEndSessionState: 50 letters, 10 digits, 30 punctuation, in
 * that order, then `+`, space and `;` turned into `~` (the suite's own URL
 * encoding cannot carry them). 90 characters with `&`, `#`, `=`, `%`, quotes.
 */
export function endSessionState(): string {
  return (pick(ALPHA, 50) + pick(DIGIT, 10) + pick(PUNCT, 30)).replace(/[+ ;]/g, '~');
}

/**
 * An end-session state as the suite draws it, drawn again until it holds
 * `&`, `#`, `=`, `%` and `"`: one the suite may send, chosen so that a return
 * address built by concatenation (KNOWN-TRAPS 28) cannot pass by chance.
 */
export function endSessionStateWithPunctuation(): string {
  for (;;) {
    const state = endSessionState();
    if ([...'&#=%"'].every((c) => state.includes(c))) return state;
  }
}

/** CreateRandomStateValue with requested_state_length 128: 124 letters and digits, then "-._~". */
export const authorizationState = () => `${pick(ALPHA + DIGIT, 124)}-._~`;
/** CreateRandomNonceValue: 10 letters and digits. */
export const suiteNonce = () => pick(ALPHA + DIGIT, 10);

// Spring's UriComponentsBuilder (BuildRedirectToEndSessionEndpoint) sends these as they are in a query
// parameter (pchar, `/`, `?`, less `&` and `=`) and percent-encodes the rest: `&`, `=`, `#`, `%`, `"`...
const RAW_IN_QUERY = /[A-Za-z0-9\-._~!$'()*+,;:@/?]/;
const springEncode = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => {
  const c = String.fromCharCode(b);
  return b < 0x80 && RAW_IN_QUERY.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
}).join('');

/** The end-session URL as the suite sends the browser there, its parameters in the suite's order and encoding. */
export function endSessionUrl(h: Harness, params: Record<string, string>): string {
  const query = Object.entries(params).map(([k, v]) => `${springEncode(k)}=${springEncode(v)}`).join('&');
  return `${h.issuer}/session/end${query ? `?${query}` : ''}`;
}

/**
 * The suite's client as its dynamic registration makes it, under the test's
 * base URL (never contacted except the back-channel endpoint): a secret long
 * enough to sign an HS256 JWT with (GenerateJWKsFromClientSecret).
 */
export function suiteClient(clientId: string, base: string, extra: Partial<ClientMetadata> = {}): ClientMetadata {
  return {
    client_id: clientId,
    client_secret: `${clientId}-secret-0123456789abcdef0123456789abcdef`,
    client_name: `Conformance ${clientId}`,
    redirect_uris: [`${base}/callback`],
    post_logout_redirect_uris: [`${base}/post_logout_redirect`],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    ...extra,
  };
}

/** The reference provider over TLS, with room for a sign-in per module from one address. */
export function startSuiteHarness(name: string, clients: ClientMetadata[], extra: Partial<Parameters<typeof startHarness>[1]> = {}): Promise<Harness> {
  const many = { limit: 1000, windowMs: 15 * 60_000 };
  return startHarness(name, {
    clients, tls: true,
    loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
    ...extra,
  });
}

/** The reference provider over TLS for one suite client, and openid-client's configuration for it. */
export async function startSuiteSite(name: string, site: ClientMetadata): Promise<{ h: Harness; config: oidc.Configuration; close(): Promise<void> }> {
  const h = await startSuiteHarness(name, [site]);
  return { h, config: await discover(h, site), close: () => h.close() };
}

/**
 * The first authorization of every module: the code flow with scope openid,
 * a 128-character state and a nonce (PKCE as well: the plugin requires it of
 * every client, where the suite's plans send none; see docs/testing.md).
 */
export async function suiteSignIn(h: Harness, config: oidc.Configuration, site: ClientMetadata, email: string) {
  const agent = new Agent(h.tls!.dispatcher);
  const { tokens } = await signIn(h, config, agent, email, { scope: 'openid', state: authorizationState(), nonce: suiteNonce(), redirectUri: site.redirect_uris![0]! });
  const idToken = tokens.id_token!;
  return { agent, idToken, claims: tokens.claims()! };
}

/**
 * The person presses the button that signs out (the suite's browser clicks
 * `button[autofocus]`): the page's form to /session/end/confirm with its own
 * fields, and `logout=yes` as that button (or the hidden field) sends it.
 */
export async function pressSignOut(agent: Agent, page: Response): Promise<Response> {
  const form = formFor(page.body, '/session/end/confirm');
  const button: Record<string, string> = /<button\b[^>]*\bname="logout"[^>]*\bvalue="yes"/.test(page.body) ? { logout: 'yes' } : {};
  expect({ ...form.fields, ...button }, 'the form signs out').to.include({ logout: 'yes' });
  return agent.submit(page, form, button);
}

/** The page's `<h1>`, as the person reads it. */
export const heading = (page: Response) => /<h1>([\s\S]*?)<\/h1>/.exec(page.body)?.[1];

/** The reference provider's name, in its pages' headings. */
const SERVICE = 'Sign-in service';

/** The question page, naming the account: the request said nothing the service can trust about who signs out. */
export function expectAsked(page: Response, email: string): void {
  expect(page.status).to.equal(200);
  expect(heading(page)).to.equal(escapeHtml(t('en', 'logout.title', { serviceName: SERVICE })));
  expect(page.body).to.include(email).and.include(t('en', 'logout.stay'));
}

/** The page a hint for this person and session gets: no question, a form that submits itself. */
export function expectSignsOutWithoutQuestion(page: Response): void {
  expect(page.status).to.equal(200);
  expect(heading(page)).to.equal(escapeHtml(t('en', 'logout.auto')));
  expect(page.body).to.not.include(t('en', 'logout.stay'));
}

/**
 * Follows the provider's redirects to where the browser stops; fails, as the
 * suite's handleHttp("post_logout_redirect") does, if one goes to the site.
 */
export async function followWithoutSite(agent: Agent, start: Response, site: ClientMetadata, why: string): Promise<Response> {
  const base = new URL(site.redirect_uris![0]!).origin;
  const res = await agent.follow(start, (u) => u.startsWith(base));
  expect(res.location?.startsWith(base) ? res.location : undefined, why).to.equal(undefined);
  return res;
}

/**
 * CheckPostLogoutState (or CheckNoPostLogoutState) and
 * CheckForUnexpectedParametersInPostLogoutRedirect: the redirect goes to the
 * registered address exactly, and its query holds `state` as sent, byte for
 * byte, and nothing else.
 */
export function expectPostLogoutRedirect(res: Response, site: ClientMetadata, state: string | undefined): void {
  expect(res.status, 'a redirect to the site').to.be.oneOf([302, 303]);
  const target = new URL(res.location!);
  expect(`${target.origin}${target.pathname}`).to.equal(site.post_logout_redirect_uris![0]);
  const params = [...target.searchParams];
  expect(params.map(([k]) => k), 'post_logout_redirect includes only expected parameters').to.deep.equal(state === undefined ? [] : ['state']);
  if (state !== undefined) expect(target.searchParams.get('state'), 'state passed to post logout redirect uri matches request').to.equal(state);
}

const UI_REQUIRED = ['interaction_required', 'login_required', 'account_selection_required', 'consent_required'];
const ERROR_RESPONSE_PARAMS = ['error', 'error_description', 'error_uri', 'state', 'session_state', 'iss'];

/**
 * The second authorization, with prompt=none, in the same browser
 * (AbstractOIDCCRpInitiatedLogout): it must come back to the site with one of
 * the errors that need a user interface (OIDCC-3.1.2.6), proving the
 * provider's session is gone, and pass the suite's error-response checks.
 */
export async function expectPromptNoneFails(h: Harness, config: oidc.Configuration, site: ClientMetadata, agent: Agent): Promise<string> {
  const state = authorizationState();
  const redirectUri = site.redirect_uris![0]!;
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri, scope: 'openid', state, nonce: suiteNonce(), prompt: 'none',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
  });
  const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(redirectUri));
  expect(res.location, 'prompt=none goes back to the site').to.be.a('string').and.satisfy((l: string) => l.startsWith(`${redirectUri}?`));
  const answer = new URL(res.location!).searchParams;
  expect(answer.get('error'), "'error' field from the authorization endpoint").to.be.oneOf(UI_REQUIRED);
  expect(answer.get('state'), 'CheckStateInAuthorizationResponse').to.equal(state);
  expect(answer.get('iss'), 'ValidateIssIfPresentInAuthorizationResponse').to.equal(h.issuer);
  expect(answer.has('code'), 'RejectAuthCodeInAuthorizationEndpointResponse').to.equal(false);
  expect([...answer.keys()].filter((k) => !ERROR_RESPONSE_PARAMS.includes(k)), 'error response includes only expected parameters').to.deep.equal([]);
  expect(answer.get('error_description') ?? '', 'error_description: NQCHAR-like, no CR, LF or TAB').to.match(/^[\x20\x21\x23-\x5B\x5D-\x7E]*$/);
  return answer.get('error')!;
}

/**
 * GetDynamicServerConfiguration, then CheckDiscEndpointAllEndpointsAreHttps
 * and CheckDiscEndSessionEndpoint: every `*_endpoint` is a URL with the https
 * scheme, end_session_endpoint among them. Returns the document.
 */
export async function discoveryWithHttpsEndpoints(h: Harness): Promise<Record<string, unknown>> {
  const res = await h.tls!.fetch(`${h.issuer}/.well-known/openid-configuration`);
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^application\/json\b/);
  const doc = await res.json() as Record<string, unknown>;
  expect(doc.issuer).to.equal(h.issuer);
  const endpoints = Object.keys(doc).filter((k) => k.endsWith('_endpoint'));
  expect(endpoints).to.include('end_session_endpoint');
  for (const key of endpoints) {
    expect(doc[key], `${key} is expected to be a string containing a URL`).to.be.a('string');
    const url = URL.parse(doc[key] as string);
    expect(url?.protocol, `${key} must use the https scheme`).to.equal('https:');
  }
  expect(doc.end_session_endpoint).to.equal(`${h.issuer}/session/end`);
  return doc;
}
