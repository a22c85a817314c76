import Router from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import type { Logger } from '../../host.ts';
import { readJson } from '../../http/body.ts';
import { jsonErrors, PluginError } from '../../http/errors.ts';
import { tooMany, withinRate, type RateLimit } from '../../http/rate-limit.ts';
import { validate } from '../../http/validate.ts';
import { POLL, type Streams } from '../../ssf/streams.ts';
import type { Transmitter } from '../../ssf/transmitter.ts';
import type { Store } from '../../store/store.ts';
import { bearer, SSF_MANAGE, SSF_READ, type SsfState } from './authorize.ts';
import { SSF_PATHS, ssfConfiguration } from './configuration.ts';
import { POLL_MAX_EVENTS, pollRequest, streamCreateRequest, streamStatusRequest, streamUpdateRequest, verificationRequest } from './schemas.ts';
import { settingsFrom, streamAnswer, unknownStream } from './stream-answer.ts';

export interface SsfRouteDeps {
  provider: Provider;
  store: Store;
  streams: Streams;
  transmitter: Transmitter;
  logger: Logger;
  /** Hosts a push may go to over http or on a private address (the plugin's allowPrivateFetchHosts). */
  allowPrivateFetchHosts: string[];
}

const MAX_BODY_BYTES = 16 * 1024;
/** Polls per site (its one stream) per minute: a receiver that polls in a loop waits, told by Retry-After. */
export const POLL_RATE: RateLimit = { limit: 60, windowMs: 60_000 };

/**
 * The Shared Signals transmitter's endpoints (SSF 1.0 sections 7 and 8,
 * RFC 8936 for the poll): each a short chain of steps, the bearer token
 * first.
 */
export function ssfRoutes(deps: SsfRouteDeps): Router {
  const { provider, streams, transmitter } = deps;
  const privateHosts = new Set(deps.allowPrivateFetchHosts.map((h) => h.toLowerCase()));
  const router = new Router<SsfState>();
  const noStore: Middleware = async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
  const manage = [jsonErrors(deps.logger), noStore, bearer(provider, [SSF_MANAGE])];
  const read = [jsonErrors(deps.logger), noStore, bearer(provider, [SSF_READ, SSF_MANAGE])];
  const body = async <T>(ctx: Parameters<Middleware>[0], schema: Parameters<typeof validate<T>>[0]) => validate(schema, await readJson(ctx, MAX_BODY_BYTES));
  /** The site's stream, when the id is its stream's; else 404. */
  const own = async (clientId: string, streamId: string | undefined) => {
    const stream = await streams.get(clientId);
    if (!stream || (streamId !== undefined && stream.stream_id !== streamId)) throw unknownStream();
    return stream;
  };
  const queryId = (ctx: { query: Record<string, unknown> }) => (typeof ctx.query.stream_id === 'string' ? ctx.query.stream_id : undefined);

  router.get(SSF_PATHS.configuration, jsonErrors(deps.logger), (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = ssfConfiguration(provider);
  });

  router.post(SSF_PATHS.stream, ...manage, async (ctx) => {
    const asked = await body(ctx, streamCreateRequest);
    const stream = await streams.create(ctx.state.clientId, settingsFrom(provider.issuer, asked, undefined, privateHosts));
    if (!stream) throw new PluginError('stream_exists', 'this site has a stream already');
    deps.logger.info('security event stream created', { clientId: ctx.state.clientId, method: stream.delivery.method });
    ctx.status = 201;
    ctx.body = streamAnswer(provider.issuer, stream);
  });

  router.get(SSF_PATHS.stream, ...read, async (ctx) => {
    const id = queryId(ctx);
    if (id === undefined) {
      const stream = await streams.get(ctx.state.clientId);
      ctx.body = stream ? [streamAnswer(provider.issuer, stream)] : [];
      return;
    }
    ctx.body = streamAnswer(provider.issuer, await own(ctx.state.clientId, id));
  });

  for (const method of ['patch', 'put'] as const) {
    router[method](SSF_PATHS.stream, ...manage, async (ctx) => {
      const asked = await body(ctx, streamUpdateRequest);
      const stream = await own(ctx.state.clientId, asked.stream_id);
      const replace = method === 'put';
      const settings = settingsFrom(provider.issuer, asked, replace ? undefined : stream, privateHosts);
      const changed = await streams.change(ctx.state.clientId, stream, settings, replace);
      if (!changed) throw unknownStream();
      ctx.body = streamAnswer(provider.issuer, changed);
    });
  }

  router.delete(SSF_PATHS.stream, ...manage, async (ctx) => {
    const id = queryId(ctx);
    if (id === undefined) throw new PluginError('invalid_request', 'stream_id: is required');
    await own(ctx.state.clientId, id);
    await streams.remove(ctx.state.clientId);
    ctx.status = 204;
  });

  router.get(SSF_PATHS.status, ...read, async (ctx) => {
    const stream = await own(ctx.state.clientId, queryId(ctx));
    ctx.body = { stream_id: stream.stream_id, status: stream.status, ...(stream.reason ? { reason: stream.reason } : {}) };
  });

  router.post(SSF_PATHS.status, ...manage, async (ctx) => {
    const asked = await body(ctx, streamStatusRequest);
    const stream = await own(ctx.state.clientId, asked.stream_id);
    if (!(await streams.setStatus(ctx.state.clientId, stream.stream_id, asked.status, asked.reason))) throw unknownStream();
    // Held events go out once the stream is enabled again; a disabled stream's are dropped.
    if (asked.status === 'enabled' && stream.status === 'paused') await transmitter.release(ctx.state.clientId);
    if (asked.status === 'disabled') await streams.dropHeld(ctx.state.clientId);
    deps.logger.info('security event stream status changed', { clientId: ctx.state.clientId, status: asked.status });
    ctx.body = { stream_id: stream.stream_id, status: asked.status, ...(asked.reason ? { reason: asked.reason } : {}) };
  });

  router.post(SSF_PATHS.verify, ...manage, async (ctx) => {
    const asked = await body(ctx, verificationRequest);
    const stream = await own(ctx.state.clientId, asked.stream_id);
    if ((await transmitter.verify(stream, asked.state)) === 'too_soon') {
      throw tooMany(ctx, stream.min_verification_interval * 1000, `at most one verification every ${stream.min_verification_interval} seconds`);
    }
    ctx.status = 204;
  });

  // RFC 8936 section 2.2: maxEvents is an upper bound, so a larger one gets at most POLL_MAX_EVENTS (and moreAvailable).
  router.post(SSF_PATHS.poll, ...read, async (ctx) => {
    await withinRate(ctx, deps.store, streams.keys.polls(ctx.state.clientId), POLL_RATE, `at most ${POLL_RATE.limit} polls every ${POLL_RATE.windowMs / 1000} seconds`);
    const asked = await body(ctx, pollRequest);
    const stream = await own(ctx.state.clientId, undefined);
    if (stream.delivery.method !== POLL) throw new PluginError('invalid_request', 'this stream delivers by push');
    const maxEvents = Math.min(asked.maxEvents ?? POLL_MAX_EVENTS, POLL_MAX_EVENTS);
    ctx.body = await transmitter.poll(ctx.state.clientId, { ack: asked.ack ?? [], setErrs: asked.setErrs ?? {}, maxEvents });
  });

  return router;
}
