/**
 * The demo site's sessions and the sign-ins under way, in memory: a restart
 * signs everyone out of the demo site.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import type * as oidc from 'openid-client';

import { cookies } from './http.ts';

export interface Session {
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
export interface PendingSignIn { verifier: string; state: string; nonce: string; startedAt: number }

export const SESSION_COOKIE = 'demo_session';
export const TEN_MINUTES = 10 * 60;

export const random = () => randomBytes(32).toString('base64url');

const expiresAt = (tokens: oidc.TokenEndpointResponseHelpers) => {
  const expiresIn = tokens.expiresIn();
  return expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000) : undefined;
};

export function createSessions() {
  const sessions = new Map<string, Session>();
  const pending = new Map<string, PendingSignIn>();

  return {
    count: () => sessions.size,

    /** The session the request's cookie names, if it still lives. */
    current(req: IncomingMessage): { id: string; session: Session } | undefined {
      const id = cookies(req).get(SESSION_COOKIE);
      const session = id ? sessions.get(id) : undefined;
      return id && session ? { id, session } : undefined;
    },

    /** Whether a form's token is the session's (compared in constant time). */
    csrfMatches(session: Session, given: string): boolean {
      const expected = Buffer.from(session.csrf);
      const actual = Buffer.from(given);
      return actual.length === expected.length && timingSafeEqual(actual, expected);
    },

    /** A new session for a sign-in: its id, for the cookie. */
    start(tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, claims: oidc.IDToken, email: string | undefined): string {
      const id = random();
      sessions.set(id, {
        claims,
        email,
        idToken: tokens.id_token!,
        accessToken: tokens.access_token,
        accessTokenExpiresAt: expiresAt(tokens),
        refreshToken: tokens.refresh_token,
        scope: tokens.scope ?? '',
        csrf: random(),
      });
      return id;
    },

    /** A refresh's answer: the new access token, the rotated refresh token, the new ID token if any. */
    refreshed(session: Session, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): void {
      session.accessToken = tokens.access_token;
      session.accessTokenExpiresAt = expiresAt(tokens);
      session.refreshToken = tokens.refresh_token ?? session.refreshToken; // rotated
      if (tokens.id_token) {
        session.idToken = tokens.id_token;
        session.claims = tokens.claims()!;
      }
    },

    drop(id: string): void {
      sessions.delete(id);
    },

    /** Drops every session of `sid` and `sub` (either may be absent); how many went. */
    dropMatching(sub: string | undefined, sid: string | undefined): number {
      let dropped = 0;
      for (const [id, s] of sessions) {
        if ((sid === undefined || s.claims.sid === sid) && (sub === undefined || s.claims.sub === sub)) {
          sessions.delete(id);
          dropped += 1;
        }
      }
      return dropped;
    },

    /** Keeps a new sign-in (and forgets those older than ten minutes): its id, for the cookie. */
    begin(signIn: PendingSignIn): string {
      for (const [id, p] of pending) if (signIn.startedAt - p.startedAt > TEN_MINUTES * 1000) pending.delete(id);
      const id = random();
      pending.set(id, signIn);
      return id;
    },

    /** Takes the sign-in a callback answers: it is used once. */
    take(id: string | undefined): PendingSignIn | undefined {
      if (!id) return undefined;
      const signIn = pending.get(id);
      pending.delete(id);
      return signIn;
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
