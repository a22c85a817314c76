/**
 * What an operator needs of the reference provider, written as a host would
 * copy it: `/healthz` (the process is up), `/readyz` (Redis answers, the
 * letter queue is reachable, not shutting down) and Prometheus metrics from
 * the plugin's events (prom-client). docs/operations.md "Running in production".
 */
import type { Cluster, Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import { BACKCHANNEL_LOGOUT_EVENT, isUnavailable, LETTER_EVENT, NOTIFIED_EVENT, REFRESH_REPLAYED_EVENT, REPLAY_EVENT, SHARED_SIGNALS_EVENT, UNAVAILABLE_EVENT, type SignoutNotify } from '../../src/index.ts';

export interface Operations {
  /** Koa step: /healthz, /readyz (and /metrics when `metricsOnPublic`), and request metrics for everything else. */
  middleware: Middleware;
  registry: Registry;
  /** Readiness answers 503 from now on (shutdown: the load balancer stops sending). */
  draining(): void;
  /**
   * Whether Redis and the queue answered, each within the plugin's
   * redisTimeoutMs, in a check at most READY_MAX_AGE_MS old; one check at a
   * time, however many ask.
   */
  ready(): Promise<Readiness>;
}

type Readiness = { ready: boolean; checks: Record<string, 'ok' | 'failed' | 'draining'> };

/**
 * How long one readiness check answers /readyz. A load balancer, or anyone,
 * may hit /readyz at any rate: each check is a Redis read and BullMQ's
 * counts, so hits within this time share one.
 */
export const READY_MAX_AGE_MS = 1000;

const within = <T>(ms: number, work: Promise<T>) => Promise.race([
  work,
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref()),
]);

/** The route a request matched, as a label of bounded cardinality (never its path). */
function routeOf(ctx: Parameters<Middleware>[0]): string {
  const oidcRoute = (ctx as { oidc?: { route?: string } }).oidc?.route;
  if (oidcRoute) return oidcRoute;
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  return ctx.status === 404 ? 'not_found' : 'other';
}

export function createOperations(plugin: SignoutNotify, options: { metricsOnPublic?: boolean; redis?: Redis | Cluster } = {}): Operations {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['route', 'method', 'status'] as const;
  const requests = new Counter({ name: 'osn_http_requests_total', help: 'HTTP requests by route, method and status', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'osn_http_request_duration_seconds', help: 'HTTP request latency by route, method and status', labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
  });
  const notifications = new Counter({ name: 'osn_notifications_total', help: 'POST /api/notify answered 202, by result (email, in_app, or the skipped reason)', labelNames: ['result'], registers: [registry] });
  const letters = new Counter({ name: 'osn_letters_total', help: 'Letter tries finished by the worker, by outcome (sent, skipped, retry, failed)', labelNames: ['outcome'], registers: [registry] });
  const logouts = new Counter({ name: 'osn_backchannel_logouts_total', help: 'Back-channel logout tries, by site and outcome (sent, retry, failed: given up)', labelNames: ['client', 'outcome'], registers: [registry] });
  const sharedSignals = new Counter({ name: 'osn_shared_signals_total', help: 'Shared Signals SET tries, by site and outcome (sent, kept, held, retry, failed, refused, dropped)', labelNames: ['client', 'outcome'], registers: [registry] });
  const reuse = new Counter({ name: 'osn_refresh_reuse_detected_total', help: 'Reuse of a rotated refresh token or a redeemed code (theft): chain revoked', labelNames: ['model'], registers: [registry] });
  const answeredAgain = new Counter({ name: 'osn_refresh_replayed_total', help: 'Refresh answers given again within the reuse leeway, by site', labelNames: ['client'], registers: [registry] });
  const unavailable = new Counter({ name: 'osn_redis_unavailable_total', help: 'Requests answered 503 because Redis was unavailable', registers: [registry] });
  const redisErrors = new Counter({ name: 'osn_redis_errors_total', help: 'Errors the Redis client reported (connection lost, refused, ...)', registers: [registry] });
  new Gauge({
    name: 'osn_letter_queue_depth', help: 'Letters not sent yet (waiting, delayed or being sent)', registers: [registry],
    async collect() {
      this.set(await within(plugin.options.redisTimeoutMs, plugin.letters.pending()).catch(() => Number.NaN));
    },
  });

  plugin.on(NOTIFIED_EVENT, ({ result }) => notifications.inc({ result: result.skipped ?? (result.email ? 'email' : 'in_app') }));
  plugin.on(LETTER_EVENT, ({ outcome }) => letters.inc({ outcome }));
  plugin.on(BACKCHANNEL_LOGOUT_EVENT, ({ clientId, outcome }) => logouts.inc({ client: clientId, outcome }));
  plugin.on(SHARED_SIGNALS_EVENT, ({ clientId, outcome }) => sharedSignals.inc({ client: clientId, outcome }));
  plugin.on(REPLAY_EVENT, ({ model }) => reuse.inc({ model }));
  plugin.on(REFRESH_REPLAYED_EVENT, ({ clientId }) => answeredAgain.inc({ client: clientId }));
  plugin.on(UNAVAILABLE_EVENT, () => unavailable.inc());
  options.redis?.on('error', () => redisErrors.inc());

  let isDraining = false;
  async function check(): Promise<Readiness> {
    const bound = plugin.options.redisTimeoutMs;
    const answers = (work: Promise<unknown>) => within(bound, work).then(() => 'ok' as const, () => 'failed' as const);
    const [redis, queue] = await Promise.all([
      answers(plugin.store.get(`${plugin.store.prefix}readyz`)),
      answers(plugin.letters.pending()),
    ]);
    return { ready: redis === 'ok' && queue === 'ok', checks: { redis, queue } };
  }

  // The latest check: hits join it while it runs, and take its answer until it is READY_MAX_AGE_MS old.
  // A check that outlasts that (Redis slow or gone) is still the only one.
  let last: { startedAt: number; answer: Promise<Readiness>; settled: boolean } | undefined;
  function ready(): Promise<Readiness> {
    if (isDraining) return Promise.resolve({ ready: false, checks: { shutdown: 'draining' } });
    if (last === undefined || (last.settled && Date.now() - last.startedAt >= READY_MAX_AGE_MS)) {
      const current = { startedAt: Date.now(), answer: check(), settled: false };
      const settle = () => { current.settled = true; };
      current.answer.then(settle, settle);
      last = current;
    }
    return last.answer;
  }

  const middleware: Middleware = async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/healthz') {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.method === 'GET' && ctx.path === '/readyz') {
      const state = await ready();
      ctx.set('Cache-Control', 'no-store');
      ctx.status = state.ready ? 200 : 503;
      ctx.body = { status: state.ready ? 'ready' : 'unavailable', checks: state.checks };
      return;
    }
    if (options.metricsOnPublic && ctx.method === 'GET' && ctx.path === '/metrics') {
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
      return;
    }
    const started = process.hrtime.bigint();
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      // The plugin's outermost step turns an outage into 503.
      if (isUnavailable(err)) status = 503;
      throw err;
    } finally {
      const labels = { route: routeOf(ctx), method: ctx.method, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  return { middleware, registry, ready, draining() { isDraining = true; } };
}
