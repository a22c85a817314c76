import type { Middleware } from 'koa';
import { decodeJwt } from 'jose';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { negotiateLocale } from '../i18n/index.ts';
import { readForm } from '../http/body.ts';
import type { ContactLookup } from '../host.ts';
import { sendPage as send } from '../http/page.ts';
import { autoLogoutPage, logoutPage, signedOutPage, stayedPage } from '../../views/logout.ts';
import { logoutLinesOf, SIGNOUT_COOKIE, signoutIdFrom } from './backchannel.ts';
import type { BackchannelLogout } from '../notify/backchannel-logout.ts';
import type { RouteStep } from './route-steps.ts';
import { subjectFor } from './subject.ts';
import { providerContext } from '../http/context.ts';

/** Marks a sign-out whose return address was refused, for the signed-out page. */
const REJECTED_COOKIE = 'osn.return_rejected';
/** Marks "Stay signed in" (its value: the site's return address, or empty), for the page that says so. */
const STAYED_COOKIE = 'osn.stayed';
const SHORT = 10 * 60_000;
// Both markers are HttpOnly (Koa's cookies default), SameSite=Lax, for /session/end only.

/**
 * Runs before oidc-provider's /session/end. An unregistered
 * post_logout_redirect_uri is an error there; the spec wants the sign-out to
 * happen anyway and end on the service's own page, which says the address was
 * not accepted. So is an id_token_hint that does not verify: it is dropped
 * and the person is asked, as without one. A POST is turned into the
 * equivalent GET so the provider reads the cleaned parameters.
 */
export function endSessionPreStep(provider: Provider, serviceName: string): RouteStep {
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
    let cleaned = false;
    const hint = params.getAll('id_token_hint');
    // A repeated hint: the provider refuses the request itself.
    if (hint.length > 1) return next();
    if (hint.length === 1 && !(await hintVerifies(provider, hint[0]!))) {
      // OpenID Connect RP-Initiated Logout 1.0 section 4: information that fails validation is not used.
      params.delete('id_token_hint');
      cleaned = true;
    }
    const uri = params.get('post_logout_redirect_uri');
    if (uri !== null && !(await returnAllowed(provider, params, uri))) {
      // Its state goes with it unused: oidc-provider returns state only with a return address.
      params.delete('post_logout_redirect_uri');
      ctx.cookies.set(REJECTED_COOKIE, '1', { sameSite: 'lax', path, maxAge: SHORT });
      cleaned = true;
    }
    if (cleaned) ctx.querystring = params.toString();
    await next();
    noSessionPage(providerContext(ctx), serviceName);
    return undefined;
  };
  return { where: { routes: ['end_session'] }, step };
}

/**
 * Runs around oidc-provider's /session/end/confirm. After "Stay signed in"
 * the provider sends the browser straight to the site's return address (or
 * to the signed-out page, which would then say the opposite of what
 * happened). Instead it ends on the service's page that says the person is
 * still signed in and the asking site was signed out, with the site's return
 * address (as registered, with its state) as a link.
 */
export function endSessionConfirmPostStep(provider: Provider): RouteStep {
  const path = provider.pathFor('end_session');
  const step: Middleware = async (ctx, next) => {
    await next();
    // An error page, or "Sign out": the provider's answer as it is.
    if (ctx.status !== 303) return;
    const { oidc } = providerContext(ctx);
    if (oidc.params!.logout) return;
    const location = ctx.response.get('location');
    const success = new URL(oidc.urlFor('end_session_success'));
    const returnTo = location.startsWith(success.href) ? '' : location;
    ctx.cookies.set(STAYED_COOKIE, returnTo || '-', { sameSite: 'lax', path, maxAge: SHORT });
    if (oidc.client) success.searchParams.set('client_id', oidc.client.clientId);
    ctx.redirect(success.href);
  };
  return { where: { routes: ['end_session_confirm'] }, step: (ctx, next) => (ctx.method === 'POST' ? step(ctx, next) : next()) };
}

/**
 * Without a signed-in person oidc-provider answers with its own form that
 * submits itself (in English, without a language or a title a screen reader
 * can use, "Continue" without JavaScript); the service's page in the reader's
 * language instead, with the same form.
 */
function noSessionPage(ctx: KoaContextWithOIDC, serviceName: string): void {
  if (ctx.status !== 200) return;
  const session = ctx.oidc.session!;
  if (session.accountId) return;
  send(ctx, autoLogoutPage({
    locale: readerLocale(ctx),
    serviceName,
    action: ctx.oidc.urlFor('end_session_confirm'),
    xsrf: String(session.state!.secret),
  }));
}

/** The language of the sign-out pages: the person's own, else ui_locales, else the browser's. */
function readerLocale(ctx: KoaContextWithOIDC, preferred?: string) {
  // oidc-provider's params are strings (a repeated one is refused before this).
  return negotiateLocale({ preferred, uiLocales: ctx.oidc.params!.ui_locales as string | undefined, acceptLanguage: ctx.get('accept-language') });
}

/**
 * Whether an id_token_hint passes oidc-provider's own checks: a JWT for a
 * known site (its `aud`), signed by this service with that site's ID token
 * algorithm. A forged one, one re-headed `alg: none`, one for an unknown
 * site or no JWT at all does not: the provider would answer an error page
 * and leave the person signed in although they asked to sign out.
 */
async function hintVerifies(provider: Provider, hint: string): Promise<boolean> {
  let aud: unknown;
  try {
    ({ aud } = decodeJwt(hint));
  } catch {
    return false;
  }
  if (typeof aud !== 'string') return false;
  const client = await provider.Client.find(aud).catch(() => undefined);
  if (!client) return false;
  return provider.IdToken.validate(hint, client).then(() => true, () => false);
}

/** Called with a hint that verifies (hintVerifies), or none. */
async function returnAllowed(provider: Provider, params: URLSearchParams, uri: string): Promise<boolean> {
  const hint = params.get('id_token_hint');
  const clientId = hint ? decodeJwt(hint).aud as string : params.get('client_id');
  if (!clientId) return false; // nobody to check it against: never redirect there
  const client = await provider.Client.find(clientId).catch(() => undefined);
  // An unknown client_id: the provider refuses the request itself.
  return !client || client.postLogoutRedirectUriAllowed(uri);
}

interface HookDeps {
  serviceName: string;
  contacts: ContactLookup;
}

/**
 * features.rpInitiatedLogout.logoutSource. oidc-provider renders it whenever
 * a session exists, even for a valid id_token_hint, and does not compare the
 * hint with the session: a hint for this very person, from a site of this
 * session, signs out without a question; anything else asks.
 */
export function logoutSource(deps: HookDeps) {
  return async (ctx: KoaContextWithOIDC, _form: string): Promise<void> => {
    const { client, params } = ctx.oidc;
    // oidc-provider asks for this page only when someone is signed in (noSessionPage otherwise).
    const session = ctx.oidc.session!;
    const contact = await deps.contacts(session.accountId!);
    const input = {
      locale: readerLocale(ctx, contact?.locale),
      serviceName: deps.serviceName,
      action: ctx.oidc.urlFor('end_session_confirm'),
      xsrf: String(session.state!.secret),
      accountEmail: contact?.email ?? contact?.name,
      clientName: client ? client.clientName ?? client.clientId : undefined,
      returnAddress: params!.post_logout_redirect_uri as string | undefined,
    };
    const matches = await hintMatchesSession(ctx);
    send(ctx, matches ? autoLogoutPage(input) : logoutPage(input));
  };
}

/**
 * Whether the id_token_hint names who signs out: its `sub` is the signed-in
 * person's (as its site sees them, pairwise included), its site is one this
 * session signed in to, and its `sid`, when it has one, is this session's.
 * Sites registered without `backchannel_logout_session_required` get ID
 * tokens without `sid`; their hints match by person and site.
 */
async function hintMatchesSession(ctx: KoaContextWithOIDC): Promise<boolean> {
  const { client } = ctx.oidc;
  const session = ctx.oidc.session!;
  const hint = (ctx.oidc.entities as { IdTokenHint?: { payload: { sub?: string; sid?: string } } }).IdTokenHint;
  if (!hint || !client || !session.accountId) return false;
  const sid = session.sidFor(client.clientId);
  if (sid === undefined) return false;
  if (hint.payload.sid !== undefined && hint.payload.sid !== sid) return false;
  return hint.payload.sub === await subjectFor(ctx.oidc.provider, ctx, session.accountId, client);
}

/** features.rpInitiatedLogout.postLogoutSuccessSource: the service's own signed-out (or still signed-in) page. */
export function postLogoutSuccessSource(deps: HookDeps & { logouts?: BackchannelLogout }) {
  return async (ctx: KoaContextWithOIDC): Promise<void> => {
    const path = ctx.oidc.provider.pathFor('end_session');
    const take = (name: string) => {
      const value = ctx.cookies.get(name);
      if (value !== undefined) ctx.cookies.set(name, null, { path });
      return value;
    };
    const returnRejected = take(REJECTED_COOKIE) === '1';
    const stayed = take(STAYED_COOKIE);
    // Each site's back-channel logout of the sign-out this page follows (./backchannel.ts).
    const signoutId = signoutIdFrom(ctx.cookies.get(SIGNOUT_COOKIE));
    const logouts = signoutId && deps.logouts ? await logoutLinesOf(ctx.oidc.provider, await deps.logouts.outcomesOfSignout(signoutId)) : [];
    const { client } = ctx.oidc;
    const clientName = client ? client.clientName ?? client.clientId : undefined;
    const session = await ctx.oidc.provider.Session.get(ctx);
    // Still signed in ("Stay signed in", or this page opened by hand): say so, never "signed out".
    if (session.accountId) {
      const contact = await deps.contacts(session.accountId);
      send(ctx, stayedPage({
        locale: negotiateLocale({ preferred: contact?.locale, acceptLanguage: ctx.get('accept-language') }),
        serviceName: deps.serviceName,
        clientName,
        returnTo: allowedReturn(client, stayed),
        consoleUrl: `${ctx.oidc.issuer.replace(/\/$/, '')}/console`,
        logouts,
      }));
      return;
    }
    send(ctx, signedOutPage({
      locale: negotiateLocale({ acceptLanguage: ctx.get('accept-language') }),
      serviceName: deps.serviceName,
      clientName,
      returnRejected,
      logouts,
    }));
  };
}

/**
 * The way back after "Stay signed in": the return address as the provider
 * built it (the registered address plus state), only if the site registered
 * it. The marker is a cookie, so its value is checked like any input: "-"
 * (no address), a value that is no URL, or no site named, give none.
 */
function allowedReturn(client: KoaContextWithOIDC['oidc']['client'], marker: string | undefined): string | undefined {
  const url = URL.parse(marker ?? '');
  if (!url || !client) return undefined;
  const registered = new URL(url);
  registered.searchParams.delete('state');
  return client.postLogoutRedirectUriAllowed(registered.href) ? url.href : undefined;
}
