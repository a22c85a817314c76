import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';

import type { MessageKey } from '../i18n/index.ts';
import { ERRORS, PAGE_SENTENCE, type ErrorName } from './error-codes.ts';
import type { Logger } from '../host.ts';
import { asUnavailable, isUnavailable } from '../store/availability.ts';
import { discardBody } from './body.ts';

/**
 * The plugin's own errors, by their name in the catalog (./error-codes.ts),
 * which gives the code and status: oidc-provider's error class, so `status`,
 * `expose` and `{ error, error_description }` work as for the provider's.
 */
export class PluginError extends errors.OIDCProviderError {
  declare error_description: string;
  /** The sentence a page shows for it (in the reader's language); else the catalog's for its name. */
  declare messageKey?: MessageKey;

  constructor(name: ErrorName, description: string, messageKey?: MessageKey) {
    const entry = ERRORS[name];
    super(entry.status, entry.code);
    // A name whose sentence is not its code's (form_expired) carries it; the rest take their code's, by the page.
    const page = messageKey ?? (entry.page !== PAGE_SENTENCE.get(entry.code) ? entry.page : undefined);
    Object.assign(this, { error_description: description, ...(page ? { messageKey: page } : {}) });
  }
}

/** 401: the route needs the person's service session. */
export const loginRequired = () => new PluginError('login_required', 'sign in to the service first');
/**
 * 401: the request adds a way into the account and the sign-in is not recent
 * enough; the JSON answer names the page that leads to a new one (`sign_in_again`).
 */
export const recentSignInRequired = (signInAgain: string) => Object.assign(
  new PluginError('recent_sign_in_required', 'this adds a way into the account and needs a recent sign-in: sign in again (sign_in_again), then make the request again'),
  { fields: { sign_in_again: signInAgain } },
);
/** 403: a state-changing request that did not come from the service's own pages. */
export const crossOrigin = () => new PluginError('cross_origin', 'cross-origin request refused');

/**
 * Renders errors of the plugin's JSON routes as `{ error, error_description }`
 * with the error's status; anything else is logged and answered 500
 * `server_error` without internals.
 */
export function jsonErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      await discardBody(ctx);
      ctx.set('Cache-Control', 'no-store');
      if (err instanceof errors.OIDCProviderError && err.expose) {
        ctx.status = err.statusCode;
        const challenge = (err as { wwwAuthenticate?: string }).wwwAuthenticate;
        if (challenge) ctx.set('WWW-Authenticate', challenge);
        const { error_description: description, fields } = err as { error_description?: string; fields?: Record<string, string> };
        ctx.body = { error: err.error, error_description: description ?? err.message, ...fields };
        return;
      }
      // Redis unavailable: the outermost step answers 503 with Retry-After.
      if (isUnavailable(err)) asUnavailable(err);
      logger.error('request failed', { path: ctx.path, reason: (err as Error).message });
      ctx.status = 500;
      ctx.body = { error: 'server_error', error_description: 'the request could not be completed; try again' };
    }
  };
}
