import type { Middleware } from 'koa';

const CLIENT_AUTH_ROUTES = new Set(['token', 'revocation', 'introspection']);

/**
 * A request with no client authentication at all is, per RFC 6749 section 5.2,
 * `invalid_client` (401 with WWW-Authenticate). oidc-provider answers it as
 * `invalid_request` (400); this turns that one answer into the RFC's.
 */
export function missingClientAuthIsInvalidClient(): Middleware {
  return async (ctx, next) => {
    await next();
    const route = (ctx as { oidc?: { route?: string } }).oidc?.route;
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (
      route && CLIENT_AUTH_ROUTES.has(route)
      && ctx.status === 400
      && body?.error === 'invalid_request'
      && body.error_description === 'no client authentication mechanism provided'
    ) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client', error_description: 'client authentication is required' };
      ctx.set('WWW-Authenticate', 'Basic realm="oidc", error="invalid_client"');
    }
  };
}
