import type { Middleware } from 'koa';
import { decodeJwt } from 'jose';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import { negotiateLocale } from '../i18n/index.ts';
import { readForm } from '../http/body.ts';
import type { ContactLookup } from '../options.ts';
import { sendPage as send } from '../http/page.ts';
import { autoLogoutPage, logoutPage, signedOutPage } from '../../views/logout.ts';
import { routeMatcher } from './paths.ts';

/** Marks a sign-out whose return address was refused, for the signed-out page. */
const REJECTED_COOKIE = 'osn.return_rejected';

/**
 * Runs before oidc-provider's /session/end. An unregistered
 * post_logout_redirect_uri is an error there; the spec wants the sign-out to
 * happen anyway and end on the service's own page, which says the address was
 * not accepted. A POST is turned into the equivalent GET so the provider reads
 * the cleaned parameters.
 */
export function endSessionPreStep(provider: Provider): Middleware {
  const isEndSession = routeMatcher(provider, ['end_session']);
  const path = provider.pathFor('end_session');
  const step: Middleware = async (ctx, next) => {
    if (ctx.method === 'POST') {
      const form = await readForm(ctx, 56 * 1024);
      ctx.status = 303;
      ctx.redirect(`${path}?${new URLSearchParams(form)}`);
      return undefined;
    }
    if (ctx.method !== 'GET') return next();
    const params = new URLSearchParams(ctx.querystring);
    const uri = params.get('post_logout_redirect_uri');
    if (uri !== null && !(await returnAllowed(provider, params, uri))) {
      params.delete('post_logout_redirect_uri');
      params.delete('state');
      ctx.querystring = params.toString();
      ctx.cookies.set(REJECTED_COOKIE, '1', { httpOnly: true, sameSite: 'lax', path, maxAge: 10 * 60_000, overwrite: true });
    }
    return next();
  };
  return (ctx, next) => (isEndSession(ctx.path) ? step(ctx, next) : next());
}

async function returnAllowed(provider: Provider, params: URLSearchParams, uri: string): Promise<boolean> {
  let clientId = params.get('client_id') ?? undefined;
  const hint = params.get('id_token_hint');
  if (hint) {
    try {
      const { aud } = decodeJwt(hint);
      clientId = Array.isArray(aud) ? aud[0] : aud;
    } catch {
      return true; // the provider answers the malformed hint itself
    }
  }
  if (!clientId) return false; // nobody to check it against: never redirect there
  const client = await provider.Client.find(clientId).catch(() => undefined);
  return !client || client.postLogoutRedirectUriAllowed(uri);
}

interface HookDeps {
  serviceName: string;
  contacts: ContactLookup;
  pairwiseIdentifier: Configuration['pairwiseIdentifier'];
}

/**
 * features.rpInitiatedLogout.logoutSource. oidc-provider renders it whenever
 * a session exists, even for a valid id_token_hint, and does not compare the
 * hint with the session: a hint for this very person and session signs out
 * without a question; anything else asks.
 */
export function logoutSource(deps: HookDeps) {
  return async (ctx: KoaContextWithOIDC, _form: string): Promise<void> => {
    const { session, client, params } = ctx.oidc;
    const accountId = session?.accountId;
    const contact = accountId ? await deps.contacts(accountId) : undefined;
    const locale = negotiateLocale({
      preferred: contact?.locale,
      uiLocales: typeof params?.ui_locales === 'string' ? params.ui_locales : undefined,
      acceptLanguage: ctx.get('accept-language'),
    });
    const input = {
      locale,
      serviceName: deps.serviceName,
      action: ctx.oidc.urlFor('end_session_confirm'),
      xsrf: String(session!.state!.secret),
      accountEmail: contact?.email,
      clientName: client ? client.clientName ?? client.clientId : undefined,
      formAction: typeof params?.post_logout_redirect_uri === 'string' ? [params.post_logout_redirect_uri] : [],
    };
    const matches = await hintMatchesSession(ctx, deps);
    send(ctx, matches ? autoLogoutPage(input) : logoutPage(input));
  };
}

async function hintMatchesSession(ctx: KoaContextWithOIDC, deps: HookDeps): Promise<boolean> {
  const { session, client } = ctx.oidc;
  const hint = (ctx.oidc.entities as { IdTokenHint?: { payload: { sub?: string; sid?: string } } }).IdTokenHint;
  if (!hint || !client || !session?.accountId) return false;
  const expectedSub = client.subjectType === 'pairwise' && deps.pairwiseIdentifier
    ? await deps.pairwiseIdentifier(ctx, session.accountId, client)
    : session.accountId;
  const sid = session.sidFor(client.clientId);
  return hint.payload.sub === expectedSub && sid !== undefined && hint.payload.sid === sid;
}

/** features.rpInitiatedLogout.postLogoutSuccessSource: the service's own signed-out page. */
export function postLogoutSuccessSource(deps: HookDeps) {
  return async (ctx: KoaContextWithOIDC): Promise<void> => {
    const returnRejected = ctx.cookies.get(REJECTED_COOKIE) === '1';
    if (returnRejected) {
      ctx.cookies.set(REJECTED_COOKIE, null, { path: ctx.oidc.provider.pathFor('end_session') });
    }
    const { client } = ctx.oidc;
    const locale = negotiateLocale({ acceptLanguage: ctx.get('accept-language') });
    send(ctx, signedOutPage({
      locale,
      serviceName: deps.serviceName,
      clientName: client ? client.clientName ?? client.clientId : undefined,
      returnRejected,
    }));
  };
}
