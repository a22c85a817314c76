import type { DefaultContext, ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * Any Koa context the plugin's helpers work on: a plain one, a router's with
 * its state and params, or oidc-provider's. Helpers take this instead of
 * Koa's `Context`, whose fixed state type a router's context does not fit.
 */
export type HttpContext = ParameterizedContext<unknown, DefaultContext, unknown>;

/**
 * The one bridge from a Koa context to oidc-provider's view of it: for steps
 * that run on the provider's own routes (`ctx.oidc` is set there, and only
 * there: KNOWN-TRAPS 9).
 */
export function providerContext(ctx: HttpContext): KoaContextWithOIDC {
  return ctx as unknown as KoaContextWithOIDC;
}

/**
 * The service session of a request, read from oidc-provider's session cookie.
 * `Session.get` takes any Koa context (it builds its own when `ctx.oidc` is
 * absent); its typings ask for the provider's.
 */
export function serviceSession(provider: Provider, ctx: HttpContext): ReturnType<Provider['Session']['get']> {
  return provider.Session.get(ctx as unknown as KoaContextWithOIDC);
}
