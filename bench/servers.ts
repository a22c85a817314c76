/**
 * The four servers the benchmark compares: one host (the same oidc-provider
 * configuration, client, signing key, TTLs, scopes, opaque tokens,
 * client_secret_basic, refresh tokens issued and rotated, accounts in
 * memory), three ways to store its records, and the floor:
 *
 * - A: the plugin on Redis (`plugin.configure()` and `plugin.attach()`, as a
 *   host adds it), under a key prefix of its own.
 * - B: an unbounded in-memory adapter (bench/memory-adapter.ts): the upper
 *   bound, no I/O at all.
 * - C: the same Redis through the naive adapter most teams start from
 *   (adapters/previous/example-redis.ts, the package's copy of it): the peer.
 * - D: exactly B, plus A's Redis round trips on the timed operation's route
 *   as PINGs (bench/ops/oauth.ts D_ROUND_TRIPS): the floor of any design
 *   with A's round trips. A − D is the plugin's own work, D − B what the
 *   round trips themselves cost on this machine.
 *
 * The host is the same on all four (bench/host.ts) so that A/B and A/C
 * measure the plugin and its store, not a host's account store or metrics
 * (the reference provider reads its accounts from Redis: one more round trip
 * per token request, which any host pays for its own accounts on B and C
 * alike). Each runs in a process of its own (bench/server-process.ts).
 */
import { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import nodemailer from 'nodemailer';
import Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';

import { createSignoutNotify, type SignoutNotify } from '../src/index.ts';
import { benchLogger, countProviderErrors, hostConfiguration, listen, type CommonSettings } from './host.ts';
import { unboundedMemoryAdapter, type ExpiringMap } from './memory-adapter.ts';
import { exampleRedisAdapter } from '../adapters/previous/example-redis.ts';
import { countWire, type WireCounter } from './wire.ts';

/** C: the Redis it shares with A, under a key prefix of its own. */
export interface CSettings extends CommonSettings {
  redisUrl: string;
  keyPrefix: string;
}

/** D: its own connection to the Redis A uses, with A's client options. */
export interface DSettings extends CommonSettings {
  redisUrl: string;
  /** As A's client has it (ASettings.autoPipelining), so D's round trips cost what A's do. */
  autoPipelining: boolean;
}

export interface ASettings extends CommonSettings {
  redisUrl: string;
  keyPrefix: string;
  smtpPort: number;
  letterConcurrency: number;
  /** ioredis `enableAutoPipelining` on A's client (the host's choice; off by default, as in ioredis). */
  autoPipelining: boolean;
  /** The plugin's `redisTimeoutMs` (its default when absent); under valgrind a command takes longer than the default allows. */
  redisTimeoutMs?: number;
}

export interface ServerA {
  kind: 'A';
  issuer: string;
  provider: Provider;
  plugin: SignoutNotify;
  /** accountId -> email, as on B, C and D. */
  accounts: Map<string, string>;
  redis: Redis;
  wire: WireCounter;
  logger: ReturnType<typeof benchLogger>;
  close(): Promise<void>;
}

/**
 * The address of a bench account, from its id alone: the letter worker may
 * run in a process of its own (operation 5b), which has no account map.
 */
export function benchEmail(accountId: string): string | undefined {
  const n = /^account-(\d+)$/.exec(accountId)?.[1];
  return n === undefined ? undefined : `person-${n}@bench.example`;
}

export async function startA(settings: ASettings): Promise<ServerA> {
  const issuer = `http://127.0.0.1:${settings.port}`;
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: settings.autoPipelining });
  const wire = countWire(redis);
  const logger = benchLogger('A');
  // A pooled SMTP transport to the orchestrator's sink (operation 6).
  const mailTransport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: settings.smtpPort,
    secure: false,
    ignoreTLS: true,
    maxConnections: 5,
    maxMessages: Infinity,
  });
  const plugin = createSignoutNotify({
    redis,
    keyPrefix: settings.keyPrefix,
    mail: { transport: mailTransport, from: 'Bench <no-reply@bench.example>' },
    contacts: (accountId) => ({ email: benchEmail(accountId) }),
    logger,
    ...(settings.redisTimeoutMs ? { redisTimeoutMs: settings.redisTimeoutMs } : {}),
    // Limits out of the way: the benchmark measures the work, not the limiter's refusals.
    notify: {
      perClient: { limit: 1_000_000_000, windowSeconds: 60 },
      perPerson: { limit: 1_000_000_000, windowSeconds: 60 },
    },
    // Letters only queue until operation 6 starts the worker.
    letters: { worker: false, concurrency: settings.letterConcurrency },
  });
  const accounts = new Map<string, string>();
  const provider = new Provider(issuer, plugin.configure(hostConfiguration(settings, accounts)));
  plugin.attach(provider);
  countProviderErrors(provider, logger);
  const server = await listen(provider, settings.port);
  return {
    kind: 'A',
    issuer,
    provider,
    plugin,
    accounts,
    redis,
    wire,
    logger,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await plugin.close();
      mailTransport.close();
      await redis.quit();
    },
  };
}

export interface ServerB {
  kind: 'B' | 'C' | 'D';
  issuer: string;
  provider: Provider;
  /** accountId -> email: the accounts, in memory (C too: only its adapter is on Redis). */
  accounts: Map<string, string>;
  /** B and D: their in-memory adapter's storage. */
  storage?: ExpiringMap;
  /** C and D: their Redis connection and what they sent. */
  redis?: Redis;
  wire?: WireCounter;
  /** D: sets the route of the operation about to run and its round trips. */
  setFloor?(floor: FloorRoute | undefined): void;
  logger: ReturnType<typeof benchLogger>;
  close(): Promise<void>;
}

export type ServerC = ServerB & { kind: 'C'; redis: Redis; wire: WireCounter };
export type ServerD = ServerB & { kind: 'D'; redis: Redis; wire: WireCounter; setFloor(floor: FloorRoute | undefined): void };

/** The requests D makes its round trips for: POSTs to `path`, `roundTrips` PINGs each. */
export interface FloorRoute {
  path: string;
  roundTrips: number;
  /** Instead of each PING, this script (bench --d-reads-as-a: A's token read on one of A's records). */
  command?: { sha: string; keys: string[]; argv: string[] };
}

export async function startB(settings: CommonSettings): Promise<ServerB> {
  const adapter = unboundedMemoryAdapter(15);
  const server = await startPlain('B', settings, adapter.factory, () => adapter.store.close());
  return { ...server, storage: adapter.store };
}

export async function startC(settings: CSettings): Promise<ServerC> {
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 2 });
  const wire = countWire(redis);
  const server = await startPlain('C', settings, exampleRedisAdapter(redis, { prefix: settings.keyPrefix }), () => redis.quit());
  return { ...server, kind: 'C', redis, wire };
}

/**
 * D: B's adapter and host, and a middleware that makes the round trips. The
 * orchestrator names the route and N before each operation (the refresh and
 * the code exchange share /token and differ in their body only, which D must
 * not read before oidc-provider does: parsing it is work B does not do).
 */
export async function startD(settings: DSettings): Promise<ServerD> {
  const adapter = unboundedMemoryAdapter(15);
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: settings.autoPipelining });
  const wire = countWire(redis);
  let floor: FloorRoute | undefined;
  const server = await startPlain('D', settings, adapter.factory, async () => {
    adapter.store.close();
    await redis.quit();
  }, (provider) => provider.use(roundTripsFirst(redis, () => floor)));
  return { ...server, kind: 'D', storage: adapter.store, redis, wire, setFloor: (f) => { floor = f; } };
}

/**
 * N sequential PINGs, each awaited, before the rest of the request. Before or
 * after the route makes no difference to what they cost the process (the
 * write, ioredis' command and reply parsing, the wakeup when the reply comes),
 * and before the route nothing of oidc-provider's depends on them.
 */
function roundTripsFirst(redis: Redis, floor: () => FloorRoute | undefined): Middleware {
  return async (ctx, next) => {
    const route = floor();
    if (route && ctx.method === 'POST' && ctx.path === route.path) {
      const command = route.command;
      for (let i = 0; i < route.roundTrips; i++) {
        if (command) await redis.evalsha(command.sha, command.keys.length, ...command.keys, ...command.argv);
        else await redis.ping();
      }
    }
    await next();
  };
}

/**
 * oidc-provider as the plugin configures it, without the plugin, on the given
 * adapter (B, C and D). `extend` adds middleware: Koa composes it when the
 * server starts listening, so it must come before.
 */
async function startPlain(kind: 'B' | 'C' | 'D', settings: CommonSettings, adapter: Configuration['adapter'], closeAdapter: () => unknown, extend?: (provider: Provider) => void): Promise<ServerB> {
  const issuer = `http://127.0.0.1:${settings.port}`;
  const logger = benchLogger(kind);
  const accounts = new Map<string, string>();
  const provider = new Provider(issuer, { ...hostConfiguration(settings, accounts), adapter });
  extend?.(provider);
  countProviderErrors(provider, logger);
  const server = await listen(provider, settings.port);
  return {
    kind,
    issuer,
    provider,
    accounts,
    logger,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await closeAdapter();
    },
  };
}

