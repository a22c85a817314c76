import type { Middleware } from 'koa';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import { isUnavailable, StoreUnavailableError } from '../store/availability.ts';
import type { RouteStep } from './route-steps.ts';

/** A refresh's answer given again (reuse leeway), as the token endpoint gives one. */
function answerAgain(ctx: Parameters<Middleware>[0], answer: object): void {
  ctx.status = 200;
  ctx.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  ctx.body = answer;
}

/**
 * At the token endpoint, the adapter collects the request's writes (the old
 * code or refresh token consumed, the new tokens saved) and this step sends
 * them together once oidc-provider has built its answer: one round trip
 * instead of three, and all or nothing, since a request that fails writes
 * none of them. The consume is still one atomic step in Redis: when two
 * requests race with the same token, the loser's grant (and with it every
 * token of the chain, the winner's too) is revoked, and its answer becomes
 * invalid_grant before it leaves; within a refresh token's reuse leeway the
 * loser gets the winner's answer instead.
 */
export function batchTokenWrites(adapter: StoreAdapter, before: (ctx: object) => Promise<void> | undefined = () => undefined): RouteStep {
  // Work a theft report started for this request (the person's notice) is durable before the answer leaves.
  const collect: Middleware = async (ctx, next) => {
    await batch(ctx, next);
    const pending = before(ctx);
    if (pending) await pending;
  };
  const batch: Middleware = async (ctx, next) => {
    adapter.batch(ctx);
    try {
      await next();
    } catch (err) {
      // A request that throws writes none of what it collected; what waits
      // beside the batch (the site's "last used") still goes.
      await adapter.flush(ctx, true);
      throw err;
    }
    const replay = adapter.takeReplay(ctx);
    if (replay) {
      // A refresh token within its reuse leeway: the answer it had, again (nothing was written).
      await adapter.flush(ctx, true);
      answerAgain(ctx, replay);
      return;
    }
    let refused: Error | undefined;
    try {
      refused = await adapter.flush(ctx, ctx.status >= 400, ctx.status === 200 ? ctx.body as object : undefined);
    } catch (err) {
      // The writes were not confirmed: no token leaves. The outermost step answers 503.
      throw isUnavailable(err) ? err : new StoreUnavailableError(`token writes failed: ${(err as Error).message}`);
    }
    // Lost a race with the same refresh token within its leeway: the winner's answer.
    const lostRace = adapter.takeReplay(ctx);
    if (lostRace) {
      answerAgain(ctx, lostRace);
      return;
    }
    if (refused) {
      ctx.status = 400;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'invalid_grant', error_description: 'grant request is invalid' };
    }
  };
  // Not async: a GET of the token route passes without an extra promise.
  // Stryker disable next-line ConditionalExpression: another method's writes collected would be sent at the end of its request, the same writes; the guard only spares it the step
  return { where: { routes: ['token'] }, step: (ctx, next) => (ctx.method === 'POST' ? collect(ctx, next) : next()) };
}
