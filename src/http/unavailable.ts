import type { Context, Middleware } from 'koa';

import { negotiateLocale, t } from '../i18n/index.ts';
import { isUnavailable, StoreUnavailableError } from '../store/availability.ts';
import { errorPage } from '../../views/error.ts';
import { sendPage } from './page.ts';

/** Seconds a client is asked to wait before trying again (RFC 9110 section 10.2.3). */
export const RETRY_AFTER_SECONDS = 2;

/** Called once per request answered 503 because Redis failed. */
export type OnUnavailable = (event: { method: string; path: string; reason: string }) => void;

const ERROR = 'temporarily_unavailable';

/**
 * Every request that needed Redis while it was unavailable is answered
 * `503 temporarily_unavailable` with `Retry-After`: JSON for APIs, the error
 * page in the reader's language for a browser. It sits outside every other
 * step, so it also sees what oidc-provider's own error handling answered
 * (an OIDCProviderError with status 503: StoreUnavailableError) and what
 * routes mounted before the plugin threw.
 */
export function unavailableAs503(serviceName: string, onUnavailable?: OnUnavailable): Middleware {
  const answer = (ctx: Context, reason: string) => {
    ctx.status = 503;
    ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    ctx.set('Cache-Control', 'no-store');
    if (ctx.accepts('json', 'html') === 'html') {
      const locale = negotiateLocale({ uiLocales: ctx.query.ui_locales as string | undefined, acceptLanguage: ctx.get('accept-language') });
      sendPage(ctx, errorPage({ locale, serviceName, title: t(locale, 'error.unavailable_title'), message: t(locale, 'error.unavailable'), status: 503 }), 503);
    } else {
      ctx.body = { error: ERROR, error_description: new StoreUnavailableError(reason).error_description };
    }
    onUnavailable?.({ method: ctx.method, path: ctx.path, reason });
  };
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      answer(ctx, (err as { error_detail?: string }).error_detail ?? (err as Error).message);
      return;
    }
    // Answered further in (oidc-provider's error handler, the plugin's JSON routes).
    if (ctx.status === 503 && isUnavailableAnswer(ctx)) answer(ctx, 'redis unavailable');
  };
}

function isUnavailableAnswer(ctx: Context): boolean {
  const body = ctx.body as { error?: unknown } | string | undefined;
  if (typeof body === 'object' && body !== null && body.error === ERROR) return true;
  // A page oidc-provider's renderError made for the error (the host's page, in whatever words).
  return ctx.response.is('html') !== false;
}
