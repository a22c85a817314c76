import type { Context, Middleware } from 'koa';
import { errors } from 'oidc-provider';

import { negotiateLocale, t } from '../i18n/index.ts';
import { errorPage } from '../../views/error.ts';
import { pageHeaders, type Page } from '../../views/layout.ts';

/** Answers with a rendered page and its headers (CSP, no-store, nosniff, no framing). */
export function sendPage(ctx: Pick<Context, 'status' | 'type' | 'body' | 'set'>, page: Page, status = 200): void {
  ctx.status = status;
  ctx.set(pageHeaders(page.csp));
  ctx.type = 'html';
  ctx.body = page.html;
}

/**
 * Renders the provider's errors thrown by a page route as the service's error
 * page in the reader's language; an expired or unknown interaction gets the
 * plain "took too long" message. Other errors go on to Koa.
 */
export function htmlErrors(serviceName: string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof errors.OIDCProviderError)) throw err;
      const locale = negotiateLocale({ acceptLanguage: ctx.get('accept-language') });
      const message = err instanceof errors.SessionNotFound
        ? t(locale, 'error.session_expired')
        : (err as { error_description?: string }).error_description ?? err.message;
      sendPage(ctx, errorPage({ locale, serviceName, title: t(locale, 'error.title'), message, status: err.statusCode }), err.statusCode);
    }
  };
}
