import type { Middleware } from 'koa';

import type { RouteStep } from './route-steps.ts';

// oidc-provider serves the same document at both (RFC 8414, OpenID Connect Discovery 1.0).
const DISCOVERY_PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

/**
 * Discovery lists the response modes clients may use by default: oidc-provider
 * writes `response_modes_supported` as a fixed list (fragment included) and
 * its `discovery` setting can only add members, so this step trims the answer
 * to `allowed` (RFC 9700 section 2.1.1: code flow, query or form_post).
 */
export function codeFlowDiscovery(allowed: readonly string[]): RouteStep {
  const trim: Middleware = async (ctx, next) => {
    await next();
    const body = ctx.body as { response_modes_supported?: string[] } | undefined;
    if (ctx.status === 200 && Array.isArray(body?.response_modes_supported)) {
      body.response_modes_supported = body.response_modes_supported.filter((mode) => allowed.includes(mode));
    }
  };
  return { where: { paths: DISCOVERY_PATHS }, step: trim };
}
