/**
 * Signing in at the demo site: the authorization code flow with PKCE (S256),
 * state and nonce, through openid-client; a fresh session at the callback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import * as oidc from 'openid-client';

import { cookies, type Handler, type Responses } from './http.ts';
import { messagePage } from './pages.ts';
import { SESSION_COOKIE, TEN_MINUTES, type Sessions } from './sessions.ts';

const SIGN_IN_COOKIE = 'demo_sign_in';

export interface SignInDeps {
  configuration(): Promise<oidc.Configuration>;
  sessions: Sessions;
  http: Responses;
  redirectUri: string;
  log(line: string): void;
}

export function signInRoutes(deps: SignInDeps): { login: Handler; callback: Handler } {
  const { sessions, http, redirectUri, log } = deps;

  /** Off to the provider; `?offline_access=1` asks for a refresh token too. */
  async function login(_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const config = await deps.configuration();
    const signIn = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce(), startedAt: Date.now() };
    const id = sessions.begin(signIn);
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
    http.redirect(res, authorizationUrl.href, [http.cookie(SIGN_IN_COOKIE, id, TEN_MINUTES)]);
  }

  async function callback(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const signIn = sessions.take(cookies(req).get(SIGN_IN_COOKIE));
    const clear = http.clearCookie(SIGN_IN_COOKIE);
    if (!signIn) {
      http.page(res, 400, messagePage('Sign-in failed', 'This sign-in is unknown or has expired. Please sign in again.'), [clear]);
      return;
    }
    const config = await deps.configuration();
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
      http.page(res, 400, messagePage('Sign-in failed', `The sign-in did not complete (${code}). Please try again.`), [clear]);
      return;
    }
    // A fresh session id on every sign-in; an older session of this browser goes.
    const previous = cookies(req).get(SESSION_COOKIE);
    if (previous) sessions.drop(previous);
    const claims = tokens.claims()!;
    // With the code flow oidc-provider keeps scope claims such as email out of
    // the ID token (conformIdTokenClaims) and serves them at UserInfo;
    // openid-client checks that UserInfo's sub is the ID token's.
    let email = typeof claims.email === 'string' ? claims.email : undefined;
    if (!email) {
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = typeof userinfo.email === 'string' ? userinfo.email : undefined;
    }
    const sessionId = sessions.start(tokens, claims, email);
    log(`demo site: signed in sub=${claims.sub}${claims.sid ? ` sid=${String(claims.sid)}` : ''}`);
    http.redirect(res, '/', [clear, http.cookie(SESSION_COOKIE, sessionId)]);
  }

  return { login, callback };
}
