import { AsyncLocalStorage } from 'node:async_hooks';

import { decodeJwt } from 'jose';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { logoutJobId, type BackchannelLogout, type LogoutOutcome } from '../notify/backchannel-logout.ts';
import type { LogoutLine } from '../../views/logouts.ts';
import { providerContext } from '../http/context.ts';
import { randomId } from '../random-pool.ts';
import type { RouteStep } from './route-steps.ts';

/** Names the sign-out whose logouts the signed-out page shows (its value: a random id; HttpOnly, SameSite=Lax, for /session/end only). */
export const SIGNOUT_COOKIE = 'osn.signout';
const SHORT = 10 * 60_000;

interface SigningOut {
  /** The session being ended, read when oidc-provider sends its logouts (the session is loaded by then). */
  session: () => { uid?: string; accountId?: string | undefined } | undefined;
  signoutId: string;
  begun: boolean;
  /** What the sign-out queued beside its logouts (the Shared Signals event): stored before the answer. */
  queued: Promise<unknown>[];
}

const signingOut = new AsyncLocalStorage<SigningOut>();

/**
 * Runs around oidc-provider's /session/end/confirm, where its end_session
 * action sends a logout token to each site of the session. Those requests
 * reach the configured `fetch` inside this step, which puts each through
 * the logout queue (queuedBackchannelFetch); afterwards a cookie names the
 * sign-out, so the signed-out page can show each site's outcome.
 */
export function endSessionLogouts(provider: Provider): RouteStep {
  const path = provider.pathFor('end_session');
  const step: Middleware = async (ctx, next) => {
    if (ctx.method !== 'POST') return next();
    const state: SigningOut = { session: () => providerContext(ctx).oidc?.session, signoutId: randomId(), begun: false, queued: [] };
    await signingOut.run(state, next);
    await Promise.all(state.queued);
    if (state.begun) ctx.cookies.set(SIGNOUT_COOKIE, state.signoutId, { sameSite: 'lax', path, maxAge: SHORT });
    return undefined;
  };
  return { where: { routes: ['end_session_confirm'] }, step };
}

/**
 * Holds the sign-out's answer until `queued` is stored (oidc-provider's
 * end_session.success listeners are not awaited): a process killed right
 * after the answer loses nothing. Outside a sign-out it changes nothing.
 */
export function beforeTheAnswer(queued: Promise<unknown>): void {
  signingOut.getStore()?.queued.push(queued);
}

/** The sign-out a signed-out page is about, from its cookie (a value of another shape is ignored). */
export function signoutIdFrom(value: string | undefined): string | undefined {
  return value && /^[A-Za-z0-9_-]{16,64}$/.test(value) ? value : undefined;
}

/**
 * The configured `fetch`'s step for a back-channel logout request. Outside
 * a sign-out (the queue's own tries, the plugin's ways of ending access)
 * the request goes as it is. Inside oidc-provider's end_session it is the
 * logout's first try: recorded and queued first (durably, before the
 * person's answer), then sent; when the site does not answer 200 or 204 the
 * queue tries again with a freshly signed token. A repeated trigger of the
 * same logout sends nothing.
 */
export async function queuedBackchannelFetch(logouts: BackchannelLogout, init: RequestInit, send: () => Promise<Response>): Promise<Response> {
  const state = signingOut.getStore();
  const session = state?.session();
  if (!state || !session?.accountId || !session.uid || !(init.body instanceof URLSearchParams)) return send();
  const { aud, sid } = decodeJwt(init.body.get('logout_token') ?? '');
  const clientId = Array.isArray(aud) ? aud[0] : aud;
  if (typeof clientId !== 'string') return send();
  const sidOrNone = typeof sid === 'string' ? sid : undefined;
  const job = {
    id: logoutJobId(session.accountId, clientId, sidOrNone, `end:${session.uid}`),
    accountId: session.accountId, clientId, sid: sidOrNone, signoutId: state.signoutId, at: Date.now(),
  };
  if (!(await logouts.begin(job))) return new Response(null, { status: 204 });
  state.begun = true;
  let response: Response;
  try {
    response = await send();
  } catch (err) {
    await logouts.tried(job, err as Error);
    throw err;
  }
  await logouts.tried(job, response.status === 200 || response.status === 204 ? undefined : new Error(`the site answered ${response.status}`));
  return response;
}

const WORST: Record<LogoutLine['state'], number> = { signed_out: 0, pending: 1, unreachable: 2 };

/**
 * Outcomes as the person reads them: one line per site (its worst outcome
 * when it had several sessions), named as the site registered, with its
 * `client_uri` as the place to sign out there by hand.
 */
export async function logoutLinesOf(provider: Provider, outcomes: readonly LogoutOutcome[]): Promise<LogoutLine[]> {
  const bySite = new Map<string, LogoutOutcome>();
  for (const outcome of outcomes) {
    const seen = bySite.get(outcome.clientId);
    if (!seen || WORST[outcome.state] > WORST[seen.state]) bySite.set(outcome.clientId, outcome);
  }
  return Promise.all([...bySite.values()].map(async ({ clientId, state }) => {
    const client = await provider.Client.find(clientId).catch(() => undefined);
    const uri = URL.parse(String(client?.clientUri ?? ''));
    return { site: client?.clientName ?? clientId, state, url: uri && (uri.protocol === 'https:' || uri.protocol === 'http:') ? uri.href : undefined };
  }));
}
