import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';

import { negotiateLocale, t, type Locale, type MessageKey } from '../i18n/index.ts';
import { errorPage } from '../../views/error.ts';
import { discardBody } from './body.ts';
import { PAGE_SENTENCE } from './error-codes.ts';
import { sendPage } from './page.ts';
import type { HttpContext } from './context.ts';


/** What a failed request is told: a sentence of the service's own for its error (never the error's description, which may carry request text). */
export function errorSentence(locale: Locale, err: { error?: string | undefined; messageKey?: MessageKey | undefined }, sessionGone = false): string {
  if (err.messageKey) return t(locale, err.messageKey);
  if (sessionGone) return t(locale, 'error.session_expired');
  return t(locale, (err.error !== undefined ? PAGE_SENTENCE.get(err.error) : undefined) ?? 'error.generic');
}

export interface ErrorPageContext {
  serviceName: string;
  /** The service's base address (the issuer), for the console link. */
  issuer: string;
  /** The site the request came from, when known; linked when its client_uri is http(s). */
  site?: { name: string; uri?: string | undefined } | undefined;
  locale?: Locale | undefined;
}

function siteLink(site: ErrorPageContext['site']): { name: string; url: string } | undefined {
  if (!site?.uri) return undefined;
  try {
    const url = new URL(site.uri);
    return url.protocol === 'https:' || url.protocol === 'http:' ? { name: site.name, url: url.href } : undefined;
  } catch {
    return undefined;
  }
}

/** Answers with the service's error page: title, the sentence for the error, the status, and ways on. */
export function sendErrorPage(ctx: HttpContext, page: ErrorPageContext, err: { error?: string | undefined; messageKey?: MessageKey | undefined } | 'not_found', status: number): void {
  const locale = page.locale ?? negotiateLocale({ acceptLanguage: ctx.get('accept-language') });
  const notFound = err === 'not_found';
  const message = notFound ? t(locale, 'error.not_found_body') : errorSentence(locale, err, err instanceof errors.SessionNotFound);
  sendPage(ctx, errorPage({
    locale,
    serviceName: page.serviceName,
    title: t(locale, notFound || (typeof err === 'object' && err.error === 'not_found') ? 'error.not_found' : 'error.title'),
    message,
    status,
    consoleUrl: `${page.issuer.replace(/\/$/, '')}/console`,
    site: siteLink(page.site),
  }), status);
}

/**
 * Renders the errors a page route throws (oidc-provider's and the plugin's)
 * as the service's error page in the reader's language; an expired or
 * unknown interaction gets the plain "took too long" sentence. Other errors
 * go on to Koa.
 */
export function htmlErrors(serviceName: string, issuer: () => string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof errors.OIDCProviderError)) throw err;
      await discardBody(ctx);
      sendErrorPage(ctx, { serviceName, issuer: issuer() }, err as { error: string; messageKey?: MessageKey }, err.statusCode);
    }
  };
}

/** JSON routes: their misses answer JSON, as their errors do. */
const JSON_ROUTES = /^\/(?:console\/api|api)(?:\/|$)/i;

/**
 * The not-found page for every route nobody answered (the plugin's, the
 * host's interaction pages, oidc-provider's), and for a method a page route
 * does not take: HTML in the reader's language with a way on, instead of
 * Koa's bare text/plain. JSON routes and clients that do not take HTML get
 * `{ error, error_description }`.
 */
export function notFoundPages(serviceName: string, issuer: () => string): Middleware {
  return async (ctx, next) => {
    await next();
    if ((ctx.status !== 404 && ctx.status !== 405) || ctx.body != null) return;
    const status = ctx.status;
    if (JSON_ROUTES.test(ctx.path) || !ctx.accepts('html')) {
      ctx.status = status;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = status === 404
        ? { error: 'not_found', error_description: 'no such route' }
        : { error: 'invalid_request', error_description: 'method not allowed' };
      return;
    }
    sendErrorPage(ctx, { serviceName, issuer: issuer() }, status === 404 ? 'not_found' : { error: 'invalid_request' }, status);
  };
}
