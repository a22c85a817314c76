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
 * The parts: sign-in.ts, sign-out.ts (the rules), backchannel-logout.ts,
 * sessions.ts (in memory), http.ts and pages.ts.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import * as oidc from 'openid-client';

import { logoutTokenCheck, type LogoutTarget } from './backchannel-logout.ts';
import { cookies, readForm, responses, type Handler } from './http.ts';
import { homePage, messagePage } from './pages.ts';
import { createSessions, SESSION_COOKIE } from './sessions.ts';
import { signInRoutes } from './sign-in.ts';
import { LOGOUT_STATE_COOKIE, signOutRoutes } from './sign-out.ts';

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

const NOTICES: Record<string, string> = {
  'signed-out-here': 'You are signed out of this site. The sign-in service still knows you: signing in again goes straight through.',
  refreshed: 'Tokens refreshed.',
  'no-refresh-token': 'This sign-in has no refresh token.',
};

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
  const log = options.log ?? ((line: string) => console.log(line));
  const events = new EventEmitter<DemoSiteEvents>();

  if (issuer.protocol === 'http:' && !options.allowInsecure) {
    throw new TypeError(`demo site: issuer ${issuer.href} is http://; pass allowInsecure: true for development, use https:// otherwise`);
  }

  const sessions = createSessions();
  const http = responses({ secureCookies: baseUrl.startsWith('https://'), providerOrigin: issuer.origin });
  const checkLogoutToken = logoutTokenCheck(clientId);

  // Discovery happens on first use (and again after a failure), so the site
  // can start before the provider does.
  let discovered: Promise<oidc.Configuration> | undefined;
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

  async function home(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const current = sessions.current(req);
    const setCookies: string[] = [];
    // The cookie outlived its session (back-channel logout, restart): forget it.
    if (!current && cookies(req).has(SESSION_COOKIE)) setCookies.push(http.clearCookie(SESSION_COOKIE));

    let notice = NOTICES[url.searchParams.get('notice') ?? ''];
    const returnedState = url.searchParams.get('state');
    if (returnedState !== null) {
      // Back from the provider's end_session_endpoint (post_logout_redirect_uri).
      const expected = cookies(req).get(LOGOUT_STATE_COOKIE);
      setCookies.push(http.clearCookie(LOGOUT_STATE_COOKIE));
      notice = expected === returnedState
        ? 'You are signed out of this site and of the sign-in service.'
        : 'You are signed out of this site.';
    }
    const s = current?.session;
    http.page(res, 200, homePage({
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

  /** The provider tells us a session ended: its sessions here go. */
  async function backchannelLogout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = (await readForm(req)).get('logout_token') ?? '';
    const config = await configuration();
    let target: LogoutTarget;
    try {
      target = await checkLogoutToken(token, config);
    } catch (err) {
      log(`demo site: back-channel logout refused: ${(err as Error).message}`);
      res.writeHead(400, { ...http.headers(), 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: 'invalid logout token' }));
      return;
    }
    const { sub, sid } = target;
    const dropped = sessions.dropMatching(sub, sid);
    log(`demo site: back-channel logout sub=${sub ?? '-'} sid=${sid ?? '-'}: dropped ${dropped} session(s)`);
    events.emit('backchannel-logout', { sub, sid, dropped });
    res.writeHead(200, http.headers());
    res.end();
  }

  const signIn = signInRoutes({ configuration, sessions, http, redirectUri: `${baseUrl}/callback`, log });
  const signOut = signOutRoutes({
    configuration, sessions, http, postLogoutRedirectUri: `${baseUrl}/`, log,
    onRefreshFailed: (event) => events.emit('refresh-failed', event),
  });
  const routes: Record<string, Handler> = {
    'GET /': home,
    'GET /login': signIn.login,
    'GET /callback': signIn.callback,
    'POST /logout': signOut.signOutHere,
    'POST /logout/everywhere': signOut.signOutEverywhere,
    'POST /refresh': signOut.refresh,
    'POST /backchannel-logout': backchannelLogout,
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const handler = routes[`${req.method} ${url.pathname}`];
    if (!handler) {
      http.page(res, 404, messagePage('Not found', 'There is no such page here.'));
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
      http.page(res, unreachable ? 502 : status, messagePage('Something went wrong', unreachable
        ? `The sign-in service at ${issuer.origin} does not answer. Is it running?`
        : 'Something went wrong. Please try again.'));
    });
  });

  return {
    events,
    sessionCount: () => sessions.count(),
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
