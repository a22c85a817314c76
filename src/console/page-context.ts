import { randomBytes } from 'node:crypto';

import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import { readForm } from '../http/body.ts';
import type { Csrf } from '../http/csrf.ts';
import { crossOrigin } from '../http/errors.ts';
import { sameOrigin } from '../http/origin.ts';
import { negotiateLocale, type Locale } from '../i18n/index.ts';
import type { ContactLookup } from '../host.ts';
import { CONSOLE_CALLBACK, CONSOLE_CLIENT_ID } from '../console-client.ts';
import { signedInAccount } from './session.ts';
import type { HttpContext } from '../http/context.ts';

/** What every console page route knows once the person is signed in. */
export interface PageState {
  accountId: string;
  locale: Locale;
  email?: string | undefined;
  csrf: string;
}

export interface PageContextDeps {
  provider: Provider;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
}

/** A console path a sign-in may come back to (never the callback itself). */
export const CONSOLE_PATH = /^\/console(\/[\w%.-]*)*$/;

/**
 * Where a sign-in may send the person back to (the `state` of the console's
 * authorization request): a console page, with a section's anchor at most
 * (`/console#passkeys`); never the callback, never a `.` or `..` segment
 * that would step out of /console.
 */
export function isConsoleBack(value: string): boolean {
  const hash = value.indexOf('#');
  const path = hash < 0 ? value : value.slice(0, hash);
  const anchor = hash < 0 ? undefined : value.slice(hash + 1);
  return CONSOLE_PATH.test(path)
    && (anchor === undefined || /^[a-z][a-z0-9-]{0,40}$/.test(anchor))
    && !path.startsWith(CONSOLE_CALLBACK)
    // Browsers read `%2e` as a dot in a path segment too.
    && !path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

/**
 * The console's own authorization request, coming back to `back`. `fresh`
 * adds `max_age=0`: the provider's login prompt then asks for a sign-in
 * whatever the session says (every way the person has is offered), and the
 * session's auth time becomes now.
 */
export function consoleSignInUrl(provider: Provider, back: string, fresh = false): string {
  const url = new URL(provider.urlFor('authorization'));
  url.search = new URLSearchParams({
    client_id: CONSOLE_CLIENT_ID,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: `${provider.issuer.replace(/\/$/, '')}${CONSOLE_CALLBACK}`,
    // The code is never redeemed (the console reads the service session), but PKCE is required.
    code_challenge: randomBytes(32).toString('base64url'),
    code_challenge_method: 'S256',
    state: isConsoleBack(back) ? back : '/console',
    ...(fresh ? { max_age: '0' } : {}),
  }).toString();
  return url.href;
}

/** Not signed in: off to sign in (the console's own client) and back to this page afterwards. */
export function signInFirst(provider: Provider, ctx: HttpContext): void {
  ctx.status = 303;
  ctx.redirect(consoleSignInUrl(provider, ctx.method === 'GET' ? ctx.path : '/console'));
}

/**
 * The console pages' first step: `no-store`, the signed-in person (or off to
 * sign in for a GET; a form without a session is refused), their language
 * and their form token.
 */
export function signedInPages(deps: PageContextDeps): Middleware<PageState> {
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    const accountId = await signedInAccount(deps.provider, ctx);
    if (!accountId) {
      if (ctx.method !== 'GET') throw new errors.SessionNotFound('not signed in');
      signInFirst(deps.provider, ctx);
      return;
    }
    const contact = await deps.contacts(accountId);
    ctx.state.accountId = accountId;
    ctx.state.email = contact?.email ?? contact?.name;
    ctx.state.locale = negotiateLocale({ preferred: contact?.locale, acceptLanguage: ctx.get('accept-language') });
    ctx.state.csrf = deps.csrf.token('console', accountId);
    await next();
  };
}

/** A form of the console: same origin, the person's CSRF token; its fields. */
export async function consoleForm(deps: PageContextDeps, ctx: HttpContext & { state: PageState }): Promise<Record<string, string>> {
  if (!sameOrigin(ctx, deps.provider.issuer)) throw crossOrigin();
  const fields = await readForm(ctx);
  deps.csrf.verify('console', ctx.state.accountId, fields.csrf);
  return fields;
}

/** What every console page's view takes from the request. */
export function pageCommon(ctx: { state: PageState }, serviceName: string) {
  return { locale: ctx.state.locale, serviceName, csrf: ctx.state.csrf, accountEmail: ctx.state.email };
}

/** Back to a console page with a notice, shown where it changed and targeted (#notice). */
export function backWithNotice(ctx: HttpContext, path: string, notice: string): void {
  ctx.status = 303;
  ctx.redirect(`${path}?done=${encodeURIComponent(notice)}#notice`);
}
