import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';

import type { MessageKey } from '../i18n/index.ts';
import type { Logger } from '../host.ts';
import { asUnavailable, isUnavailable } from '../store/availability.ts';
import { discardBody } from './body.ts';

/**
 * The plugin's own errors: oidc-provider's error class, so `status`, `expose`
 * and `{ error, error_description }` work as for the provider's.
 */
export class PluginError extends errors.OIDCProviderError {
  declare error_description: string;
  /** The sentence a page shows for it (in the reader's language); else the one for its error code. */
  declare messageKey?: MessageKey;

  constructor(status: number, error: string, description: string, messageKey?: MessageKey) {
    super(status, error);
    Object.assign(this, { error_description: description, ...(messageKey ? { messageKey } : {}) });
  }
}

/** 401: the route needs the person's service session. */
export const loginRequired = () => new PluginError(401, 'login_required', 'sign in to the service first');
/** 403: a state-changing request that did not come from the service's own pages. */
export const crossOrigin = () => new PluginError(403, 'invalid_request', 'cross-origin request refused');

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
        ctx.body = { error: err.error, error_description: (err as { error_description?: string }).error_description ?? err.message };
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
