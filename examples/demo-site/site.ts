/**
 * The demo relying site: a small web site that signs people in through the
 * identity provider with openid-client and shows the three rules a site must
 * follow (SPEC.md):
 *
 * - "Sign out of this site" (level 1) is the site's own business: drop the
 *   site's session; the provider is not told and signing in again goes straight
 *   through while the service session lives.
 * - "Sign out everywhere" (level 2): drop the site's session FIRST, then send
 *   the browser to the provider's end_session_endpoint with id_token_hint and
 *   a registered post_logout_redirect_uri.
 * - A refresh that fails with invalid_grant means the access is gone: drop the
 *   site's session and send the person to sign in again.
 *
 * It also receives back-channel logout tokens and drops the sessions they
 * name. Plain node:http, openid-client and jose, nothing else: copy freely.
 * Sessions live in memory (a restart signs everyone out of the demo site).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';

import { homePage, messagePage, STYLE_HASH } from './pages.ts';

export interface DemoSiteOptions {
  /** The provider's issuer; its metadata comes from standard discovery. */
  issuer: URL;
  clientId: string;
  clientSecret: string;
  /** Where this site is reached, e.g. http://localhost:3001 (redirect URIs are built from it). */
  baseUrl: string;
  /**
   * Development only: lets openid-client talk to an http:// issuer. An http://
   * issuer without it is refused; for https:// issuers it changes nothing.
   */
  allowInsecure?: boolean;
  /** One line per thing that happens; default console.log. Never given tokens. */
  log?: (line: string) => void;
}

export interface BackchannelLogoutEvent { sub?: string; sid?: string; dropped: number }
export interface RefreshFailedEvent { sub: string; error: string }

/** What the site reports, for tests and for whoever embeds it. */
export interface DemoSiteEvents {
  'backchannel-logout': [BackchannelLogoutEvent];
  'refresh-failed': [RefreshFailedEvent];
}

export interface DemoSite {
  events: EventEmitter<DemoSiteEvents>;
  /** Number of signed-in sessions held in memory. */
  sessionCount(): number;
  listen(port: number, host?: string): Promise<void>;
  close(): Promise<void>;
}

interface Session {
  claims: oidc.IDToken;
  /** From the UserInfo endpoint (see the callback). */
  email?: string;
  idToken: string;
  accessToken: string;
  accessTokenExpiresAt?: Date;
  refreshToken?: string;
  scope: string;
  csrf: string;
}

/** What the browser's sign-in needs at the callback: PKCE verifier, state, nonce. */
interface PendingSignIn { verifier: string; state: string; nonce: string; startedAt: number }

const SESSION_COOKIE = 'demo_session';
const SIGN_IN_COOKIE = 'demo_sign_in';
const LOGOUT_STATE_COOKIE = 'demo_logout_state';
const TEN_MINUTES = 10 * 60;
const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

const NOTICES: Record<string, string> = {
  'signed-out-here': 'You are signed out of this site. The sign-in service still knows you: signing in again goes straight through.',
  refreshed: 'Tokens refreshed.',
  'no-refresh-token': 'This sign-in has no refresh token.',
};

const random = () => randomBytes(32).toString('base64url');

/** fetch failed because nothing answers at the provider's address. */
function providerUnreachable(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND') return true;
  }
  return false;
}

export function createDemoSite(options: DemoSiteOptions): DemoSite {
  const { issuer, clientId, clientSecret } = options;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const redirectUri = `${baseUrl}/callback`;
  const postLogoutRedirectUri = `${baseUrl}/`;
  const secureCookies = baseUrl.startsWith('https://');
  const log = options.log ?? ((line: string) => console.log(line));
  const events = new EventEmitter<DemoSiteEvents>();

  if (issuer.protocol === 'http:' && !options.allowInsecure) {
    throw new TypeError(`demo site: issuer ${issuer.href} is http://; pass allowInsecure: true for development, use https:// otherwise`);
  }

  const sessions = new Map<string, Session>();
  const pending = new Map<string, PendingSignIn>();

  // Discovery happens on first use (and again after a failure), so the site
  // can start before the provider does.
  let discovered: Promise<oidc.Configuration> | undefined;
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  function configuration(): Promise<oidc.Configuration> {
    discovered ??= oidc.discovery(issuer, clientId, { client_secret: clientSecret }, oidc.ClientSecretBasic(clientSecret), {
      // allowInsecureRequests: plain-HTTP calls to the provider. Development
      // issuers on http://localhost only (checked above); never in production.
      execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
    }).catch((err: unknown) => {
      discovered = undefined;
      throw err;
    });
    return discovered;
  }

  // ---- cookies --------------------------------------------------------------

  function cookies(req: IncomingMessage): Map<string, string> {
    const out = new Map<string, string>();
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    return out;
  }

  function cookie(name: string, value: string, maxAge?: number): string {
    return [
      `${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax',
      ...(secureCookies ? ['Secure'] : []),
      ...(maxAge !== undefined ? [`Max-Age=${maxAge}`] : []),
    ].join('; ');
  }

  const clearCookie = (name: string) => `${cookie(name, '', 0)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;

  function currentSession(req: IncomingMessage): { id: string; session: Session } | undefined {
    const id = cookies(req).get(SESSION_COOKIE);
    const session = id ? sessions.get(id) : undefined;
    return id && session ? { id, session } : undefined;
  }

  // ---- responses ------------------------------------------------------------

  function headers(setCookies: string[] = []): Record<string, string | string[]> {
    return {
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      ...(setCookies.length ? { 'set-cookie': setCookies } : {}),
    };
  }

  function page(res: ServerResponse, status: number, html: string, setCookies: string[] = []): void {
    res.writeHead(status, {
      ...headers(setCookies),
      'content-type': 'text/html; charset=utf-8',
      // No scripts; one hashed style; forms post here, and "Sign out everywhere"
      // redirects a form submission on to the provider.
      'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self' ${issuer.origin}; frame-ancestors 'none'; base-uri 'none'`,
    });
    res.end(html);
  }

  function redirect(res: ServerResponse, location: string, setCookies: string[] = []): void {
    res.writeHead(303, { ...headers(setCookies), location });
    res.end();
  }

  async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return new URLSearchParams();
    let body = '';
    for await (const chunk of req) {
      body += chunk;
      if (body.length > 64 * 1024) throw Object.assign(new Error('body too large'), { status: 413 });
    }
    return new URLSearchParams(body);
  }

  /** The signed-in session of a POST whose CSRF token matches; undefined otherwise. */
  async function postedSession(req: IncomingMessage, res: ServerResponse): Promise<{ id: string; session: Session } | undefined> {
    const current = currentSession(req);
    const csrf = (await readForm(req)).get('csrf') ?? '';
    if (!current) {
      redirect(res, '/', [clearCookie(SESSION_COOKIE)]); // nobody signed in here: nothing to do
      return undefined;
    }
    const expected = Buffer.from(current.session.csrf);
    const given = Buffer.from(csrf);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      page(res, 403, messagePage('Refused', 'This form has expired. Go back to the home page and try again.'));
      return undefined;
    }
    return current;
  }

  function startSession(tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, claims: oidc.IDToken, email: string | undefined): string {
    const id = random();
    const expiresIn = tokens.expiresIn();
    sessions.set(id, {
      claims,
      email,
      idToken: tokens.id_token!,
      accessToken: tokens.access_token,
      accessTokenExpiresAt: expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000) : undefined,
      refreshToken: tokens.refresh_token,
      scope: tokens.scope ?? '',
      csrf: random(),
    });
    return id;
  }

  // ---- routes ---------------------------------------------------------------

  async function home(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const current = currentSession(req);
    const setCookies: string[] = [];
    // The cookie outlived its session (back-channel logout, restart): forget it.
    if (!current && cookies(req).has(SESSION_COOKIE)) setCookies.push(clearCookie(SESSION_COOKIE));

    let notice = NOTICES[url.searchParams.get('notice') ?? ''];
    const returnedState = url.searchParams.get('state');
    if (returnedState !== null) {
      // Back from the provider's end_session_endpoint (post_logout_redirect_uri).
      const expected = cookies(req).get(LOGOUT_STATE_COOKIE);
      setCookies.push(clearCookie(LOGOUT_STATE_COOKIE));
      notice = expected === returnedState
        ? 'You are signed out of this site and of the sign-in service.'
        : 'You are signed out of this site.';
    }
    const s = current?.session;
    page(res, 200, homePage({
      notice,
      signedIn: s && {
        name: s.email ?? s.claims.sub,
        csrf: s.csrf,
        hasRefreshToken: s.refreshToken !== undefined,
        offlineAccess: s.scope.split(' ').includes('offline_access'),
        accessTokenExpiresAt: s.accessTokenExpiresAt,
      },
    }), setCookies);
  }

  /** Authorization code flow with PKCE (S256), state and nonce. */
  async function login(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const config = await configuration();
    const now = Date.now();
    for (const [id, p] of pending) if (now - p.startedAt > TEN_MINUTES * 1000) pending.delete(id);

    const signIn: PendingSignIn = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce(), startedAt: now };
    const id = random();
    pending.set(id, signIn);
    const offline = url.searchParams.get('offline_access') === '1';
    const authorizationUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: offline ? 'openid email offline_access' : 'openid email',
      // oidc-provider grants offline_access only with prompt=consent.
      ...(offline ? { prompt: 'consent' } : {}),
      code_challenge: await oidc.calculatePKCECodeChallenge(signIn.verifier),
      code_challenge_method: 'S256',
      state: signIn.state,
      nonce: signIn.nonce,
    });
    redirect(res, authorizationUrl.href, [cookie(SIGN_IN_COOKIE, id, TEN_MINUTES)]);
  }

  async function callback(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const id = cookies(req).get(SIGN_IN_COOKIE);
    const signIn = id ? pending.get(id) : undefined;
    if (id) pending.delete(id);
    const clear = clearCookie(SIGN_IN_COOKIE);
    if (!signIn) {
      page(res, 400, messagePage('Sign-in failed', 'This sign-in is unknown or has expired. Please sign in again.'), [clear]);
      return;
    }
    const config = await configuration();
    let tokens;
    try {
      tokens = await oidc.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: signIn.verifier,
        expectedState: signIn.state,
        expectedNonce: signIn.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      const code = (err as { error?: string }).error ?? (err as Error).message;
      log(`demo site: sign-in failed: ${code}`);
      page(res, 400, messagePage('Sign-in failed', `The sign-in did not complete (${code}). Please try again.`), [clear]);
      return;
    }
    // A fresh session id on every sign-in; an older session of this browser goes.
    const previous = cookies(req).get(SESSION_COOKIE);
    if (previous) sessions.delete(previous);
    const claims = tokens.claims()!;
    // With the code flow oidc-provider keeps scope claims such as email out of
    // the ID token (conformIdTokenClaims) and serves them at UserInfo;
    // openid-client checks that UserInfo's sub is the ID token's.
    let email = typeof claims.email === 'string' ? claims.email : undefined;
    if (!email) {
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = typeof userinfo.email === 'string' ? userinfo.email : undefined;
    }
    const sessionId = startSession(tokens, claims, email);
    log(`demo site: signed in sub=${claims.sub}${claims.sid ? ` sid=${String(claims.sid)}` : ''}`);
    redirect(res, '/', [clear, cookie(SESSION_COOKIE, sessionId)]);
  }

  /** Level 1: the site forgets the person. The provider is not told. */
  async function signOutHere(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    sessions.delete(current.id);
    redirect(res, '/?notice=signed-out-here', [clearCookie(SESSION_COOKIE)]);
  }

  /** Level 2: drop our own session first, then end the service session. */
  async function signOutEverywhere(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    const config = await configuration();
    sessions.delete(current.id);
    const state = oidc.randomState();
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: current.session.idToken,
      post_logout_redirect_uri: postLogoutRedirectUri,
      state,
    });
    redirect(res, endSession.href, [clearCookie(SESSION_COOKIE), cookie(LOGOUT_STATE_COOKIE, state, TEN_MINUTES)]);
  }

  async function refresh(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    const { session } = current;
    if (!session.refreshToken) {
      redirect(res, '/?notice=no-refresh-token');
      return;
    }
    const config = await configuration();
    try {
      const tokens = await oidc.refreshTokenGrant(config, session.refreshToken);
      const expiresIn = tokens.expiresIn();
      session.accessToken = tokens.access_token;
      session.accessTokenExpiresAt = expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000) : undefined;
      session.refreshToken = tokens.refresh_token ?? session.refreshToken; // rotated
      if (tokens.id_token) {
        session.idToken = tokens.id_token;
        session.claims = tokens.claims()!;
      }
      redirect(res, '/?notice=refreshed');
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
        // The access is gone (service sign-out, revocation, theft detection,
        // blocked site...): forget the person here and send them to sign in again.
        sessions.delete(current.id);
        log(`demo site: refresh failed with invalid_grant for sub=${session.claims.sub}: signing in again`);
        events.emit('refresh-failed', { sub: session.claims.sub, error: err.error });
        redirect(res, '/login', [clearCookie(SESSION_COOKIE)]);
        return;
      }
      throw err;
    }
  }

  /** OpenID Connect Back-Channel Logout 1.0: the provider tells us a session ended. */
  async function backchannelLogout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = (await readForm(req)).get('logout_token') ?? '';
    const config = await configuration();
    const metadata = config.serverMetadata();
    jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri!));
    let sub: string | undefined;
    let sid: string | undefined;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: metadata.issuer,
        audience: clientId,
        requiredClaims: ['iat', 'jti', 'events'],
        maxTokenAge: '5 minutes',
        clockTolerance: 15,
      });
      if (protectedHeader.typ !== undefined && protectedHeader.typ.toLowerCase() !== 'logout+jwt') throw new Error('typ is not logout+jwt');
      const eventClaims = payload.events as Record<string, unknown> | undefined;
      if (typeof eventClaims?.[BACKCHANNEL_EVENT] !== 'object') throw new Error('no back-channel logout event');
      if ('nonce' in payload) throw new Error('a logout token carries no nonce');
      sub = typeof payload.sub === 'string' ? payload.sub : undefined;
      sid = typeof payload.sid === 'string' ? payload.sid : undefined;
      if (!sub && !sid) throw new Error('neither sub nor sid');
    } catch (err) {
      log(`demo site: back-channel logout refused: ${(err as Error).message}`);
      res.writeHead(400, { ...headers(), 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: 'invalid logout token' }));
      return;
    }
    let dropped = 0;
    for (const [id, s] of sessions) {
      if ((sid === undefined || s.claims.sid === sid) && (sub === undefined || s.claims.sub === sub)) {
        sessions.delete(id);
        dropped += 1;
      }
    }
    log(`demo site: back-channel logout sub=${sub ?? '-'} sid=${sid ?? '-'}: dropped ${dropped} session(s)`);
    events.emit('backchannel-logout', { sub, sid, dropped });
    res.writeHead(200, headers());
    res.end();
  }

  // ---- server ---------------------------------------------------------------

  type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
  const routes: Record<string, Handler> = {
    'GET /': home,
    'GET /login': login,
    'GET /callback': callback,
    'POST /logout': signOutHere,
    'POST /logout/everywhere': signOutEverywhere,
    'POST /refresh': refresh,
    'POST /backchannel-logout': backchannelLogout,
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const handler = routes[`${req.method} ${url.pathname}`];
    if (!handler) {
      page(res, 404, messagePage('Not found', 'There is no such page here.'));
      return;
    }
    handler(req, res, url).catch((err: unknown) => {
      const status = (err as { status?: number }).status ?? 500;
      const unreachable = providerUnreachable(err);
      log(`demo site: ${req.method} ${url.pathname} failed: ${(err as Error).message}`);
      if (res.headersSent) {
        res.end();
        return;
      }
      page(res, unreachable ? 502 : status, messagePage('Something went wrong', unreachable
        ? `The sign-in service at ${issuer.origin} does not answer. Is it running?`
        : 'Something went wrong. Please try again.'));
    });
  });

  return {
    events,
    sessionCount: () => sessions.size,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    close() {
      if (!server.listening) return Promise.resolve();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
