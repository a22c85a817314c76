import type { Context } from 'koa';

import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { PluginError } from './errors.ts';

/** A fixed window: at most `limit` requests per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** 429 `rate_limited` with `Retry-After` (RFC 9110 section 10.2.3) in whole seconds, at least 1. */
export function tooMany(ctx: Context, retryAfterMs: number, description: string): PluginError {
  ctx.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  return new PluginError('rate_limited', description);
}

/**
 * Counts one request under `key` (one round trip: the counter expires with
 * its window) and throws tooMany once the window's limit is passed.
 */
export async function withinRate(ctx: Context, store: Store, key: string, rate: RateLimit, description: string): Promise<void> {
  const [allowed, left] = await store.run(commands.rateLimit(), [key], [rate.limit, rate.windowMs]) as [number, number];
  if (allowed !== 1) throw tooMany(ctx, left, description);
}
