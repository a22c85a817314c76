import type { Middleware } from 'koa';

import type { RouteStep } from './route-steps.ts';

/**
 * A request with no client authentication at all is, per RFC 6749 section 5.2,
 * `invalid_client` (401 with WWW-Authenticate). oidc-provider answers it as
 * `invalid_request` (400); this turns that one answer into the RFC's.
 */
export function missingClientAuthIsInvalidClient(): RouteStep {
  const step: Middleware = async (ctx, next) => {
    await next();
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (
      ctx.status === 400
      && body?.error === 'invalid_request'
      && body.error_description === 'no client authentication mechanism provided'
    ) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client', error_description: 'client authentication is required' };
      ctx.set('WWW-Authenticate', 'Basic realm="oidc", error="invalid_client"');
    }
  };
  return { where: { routes: ['token', 'revocation', 'introspection'] }, step };
}
