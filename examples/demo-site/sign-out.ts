/**
 * Where the demo site's session ends, by the three rules of SPEC.md (see
 * site.ts): "Sign out of this site", "Sign out everywhere", and a refresh
 * that fails with invalid_grant. Each is a form POST with the session's
 * CSRF token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import * as oidc from 'openid-client';

import { readForm, type Handler, type Responses } from './http.ts';
import { messagePage } from './pages.ts';
import { SESSION_COOKIE, TEN_MINUTES, type Session, type Sessions } from './sessions.ts';

/** Where the provider's end_session_endpoint sends the browser back with the `state` it was given. */
export const LOGOUT_STATE_COOKIE = 'demo_logout_state';

export interface SignOutDeps {
  configuration(): Promise<oidc.Configuration>;
  sessions: Sessions;
  http: Responses;
  /** Registered at the provider as the client's post_logout_redirect_uri. */
  postLogoutRedirectUri: string;
  log(line: string): void;
  /** A refresh found the access gone. */
  onRefreshFailed(event: { sub: string; error: string }): void;
}

export function signOutRoutes(deps: SignOutDeps): { signOutHere: Handler; signOutEverywhere: Handler; refresh: Handler } {
  const { sessions, http, log } = deps;

  /** The signed-in session of a POST whose CSRF token matches; undefined (and the answer sent) otherwise. */
  async function postedSession(req: IncomingMessage, res: ServerResponse): Promise<{ id: string; session: Session } | undefined> {
    const current = sessions.current(req);
    const csrf = (await readForm(req)).get('csrf') ?? '';
    if (!current) {
      http.redirect(res, '/', [http.clearCookie(SESSION_COOKIE)]); // nobody signed in here: nothing to do
      return undefined;
    }
    if (!sessions.csrfMatches(current.session, csrf)) {
      http.page(res, 403, messagePage('Refused', 'This form has expired. Go back to the home page and try again.'));
      return undefined;
    }
    return current;
  }

  /** Level 1: the site forgets the person. The provider is not told. */
  async function signOutHere(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    sessions.drop(current.id);
    http.redirect(res, '/?notice=signed-out-here', [http.clearCookie(SESSION_COOKIE)]);
  }

  /** Level 2: drop our own session first, then end the service session. */
  async function signOutEverywhere(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    const config = await deps.configuration();
    sessions.drop(current.id);
    const state = oidc.randomState();
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: current.session.idToken,
      post_logout_redirect_uri: deps.postLogoutRedirectUri,
      state,
    });
    http.redirect(res, endSession.href, [http.clearCookie(SESSION_COOKIE), http.cookie(LOGOUT_STATE_COOKIE, state, TEN_MINUTES)]);
  }

  async function refresh(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = await postedSession(req, res);
    if (!current) return;
    const { session } = current;
    if (!session.refreshToken) {
      http.redirect(res, '/?notice=no-refresh-token');
      return;
    }
    const config = await deps.configuration();
    try {
      sessions.refreshed(session, await oidc.refreshTokenGrant(config, session.refreshToken));
      http.redirect(res, '/?notice=refreshed');
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
        // The access is gone (service sign-out, revocation, theft detection,
        // blocked site...): forget the person here and send them to sign in again.
        sessions.drop(current.id);
        log(`demo site: refresh failed with invalid_grant for sub=${session.claims.sub}: signing in again`);
        deps.onRefreshFailed({ sub: session.claims.sub, error: err.error });
        http.redirect(res, '/login', [http.clearCookie(SESSION_COOKIE)]);
        return;
      }
      throw err;
    }
  }

  return { signOutHere, signOutEverywhere, refresh };
}
