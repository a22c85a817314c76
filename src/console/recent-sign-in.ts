import type Provider from 'oidc-provider';

import { serviceSession, type HttpContext } from '../http/context.ts';
import { isConsoleBack } from './page-context.ts';

/**
 * What a person asked to do that needs a recent sign-in: the page before the
 * sign-in says it in their language ("For your safety, sign in again to add
 * a passkey"). `continue` says it in general words, for a host's action the
 * plugin has no sentence for.
 */
export const RECENT_SIGN_IN_ACTIONS = ['add_passkey', 'link_account', 'unblock_site', 'delete_account', 'continue'] as const;
export type RecentSignInAction = typeof RECENT_SIGN_IN_ACTIONS[number];

export const isRecentSignInAction = (value: unknown): value is RecentSignInAction =>
  typeof value === 'string' && (RECENT_SIGN_IN_ACTIONS as readonly string[]).includes(value);

/** What the check is asked about: the action, and the console page to come back to after signing in. */
export interface RecentSignInRequest {
  action: RecentSignInAction;
  /**
   * The page where the person presses the action again once signed in: a
   * path under `/console`, with a section's anchor at most (`/console#passkeys`).
   * Nothing is done for them on the way back: no GET acts, nothing asked
   * before the sign-in is replayed.
   */
  back: string;
}

/**
 * The answer: `recent`, or where to send the person (`signInAgain`, a path
 * on the issuer: the page that says why, with the button that signs in).
 */
export type RecentSignIn = { recent: true } | { recent: false; signInAgain: string };

/** The plugin's page before the sign-in (GET /console/sign-in-again). */
export function signInAgainPath(request: RecentSignInRequest): string {
  return `/console/sign-in-again?${new URLSearchParams({ action: request.action, back: request.back }).toString()}`;
}

/**
 * A recent sign-in for what adds access (docs/security.md "A recent sign-in
 * for what adds access"): the service session's auth time (oidc-provider's
 * `loginTs`, set by a sign-in and by nothing else) within `seconds` of now.
 */
export function recentSignIns(provider: () => Provider | undefined, seconds: number) {
  function attached(): Provider {
    const found = provider();
    if (!found) throw new TypeError('oidc-signout-notify: recentSignIn needs the plugin attached to the provider (attach())');
    return found;
  }

  /** Whether a service session signed in within `seconds`. */
  function recentSession(session: { accountId?: string | undefined; authTime(): number | undefined }): boolean {
    const at = session.authTime();
    return !!session.accountId && typeof at === 'number' && Math.floor(Date.now() / 1000) - at <= seconds;
  }

  /** Whether the request's service session signed in within `seconds` (as `accountId`, when given). */
  async function isRecent(ctx: HttpContext, accountId?: string): Promise<boolean> {
    const session = await serviceSession(attached(), ctx);
    return recentSession(session) && (accountId === undefined || session.accountId === accountId);
  }

  /**
   * The check for one action. A request the check cannot honour (an unknown
   * action, a `back` outside the console) is the host's bug: a TypeError.
   */
  async function check(ctx: HttpContext, request: RecentSignInRequest, accountId?: string): Promise<RecentSignIn> {
    if (!isRecentSignInAction(request.action)) throw new TypeError(`oidc-signout-notify: recentSignIn: action must be one of ${RECENT_SIGN_IN_ACTIONS.join(', ')}`);
    if (!isConsoleBack(request.back)) throw new TypeError('oidc-signout-notify: recentSignIn: back must be a path under /console (a section\'s #anchor at most)');
    return (await isRecent(ctx, accountId)) ? { recent: true } : { recent: false, signInAgain: signInAgainPath(request) };
  }

  return { seconds, recentSession, isRecent, check };
}

export type RecentSignIns = ReturnType<typeof recentSignIns>;
