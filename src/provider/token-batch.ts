import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import { routeMatcher } from './paths.ts';

/**
 * At the token endpoint, the adapter collects the request's writes (the old
 * code or refresh token consumed, the new tokens saved) and this step sends
 * them together once oidc-provider has built its answer: one round trip
 * instead of three, and all or nothing, since a request that fails writes
 * none of them. The consume is still one atomic step in Redis: when two
 * requests race with the same token, the loser's grant (and with it every
 * token of the chain, the winner's too) is revoked, and its answer becomes
 * invalid_grant before it leaves.
 */
export function batchTokenWrites(provider: Provider, adapter: StoreAdapter): Middleware {
  const isToken = routeMatcher(provider, ['token']);
  const collect: Middleware = async (ctx, next) => {
    adapter.batch(ctx);
    try {
      await next();
    } catch (err) {
      await adapter.flush(ctx, true);
      throw err;
    }
    let refused: Error | undefined;
    try {
      refused = await adapter.flush(ctx, ctx.status >= 400);
    } catch {
      ctx.status = 503;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'temporarily_unavailable', error_description: 'the request could not be completed; try again' };
      return;
    }
    if (refused) {
      ctx.status = 400;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'invalid_grant', error_description: 'grant request is invalid' };
    }
  };
  // Not async: every other request passes without an extra promise.
  return (ctx, next) => (ctx.method === 'POST' && isToken(ctx.path) ? collect(ctx, next) : next());
}
