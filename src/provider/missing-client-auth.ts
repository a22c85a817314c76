import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { routeMatcher } from './paths.ts';

const CLIENT_AUTH_ROUTES = ['token', 'revocation', 'introspection'];

/**
 * A request with no client authentication at all is, per RFC 6749 section 5.2,
 * `invalid_client` (401 with WWW-Authenticate). oidc-provider answers it as
 * `invalid_request` (400); this turns that one answer into the RFC's.
 */
export function missingClientAuthIsInvalidClient(provider: Provider): Middleware {
  const authenticatesClients = routeMatcher(provider, CLIENT_AUTH_ROUTES);
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
  return (ctx, next) => (authenticatesClients(ctx.path) ? step(ctx, next) : next());
}
