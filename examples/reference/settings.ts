import { readFileSync } from 'node:fs';

import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

import { previousStoreOptions } from './previous-store.ts';
import { redisReconnect } from '../../src/index.ts';
import { blockList, type TrustProxy } from './client-ip.ts';
import type { ReferenceSettings } from './provider.ts';
import { loopback } from './upstream-clients.ts';
import { normalizeDomain } from './accounts.ts';

/** Thrown for bad configuration; start-up prints the message alone and stops. */
export class ConfigurationError extends Error {}

const clientSchema = z.object({
  client_id: z.string().min(1),
  client_name: z.string().optional(),
  redirect_uris: z.array(z.string().url()).optional(),
  post_logout_redirect_uris: z.array(z.string().url()).optional(),
}).passthrough();

const organizationSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  admins: z.array(z.string().email()),
  members: z.array(z.string().email()),
  clients: z.array(z.string().min(1)),
}).strict();

const upstreamSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be 1-40 lower-case letters, digits and hyphens'),
  name: z.string().trim().min(1).max(60),
  issuer: z.string().url().refine((value) => {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && loopback(url));
  }, 'must be an https:// URL (http:// on localhost or 127.0.0.1 only, for development)'),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  scope: z.string().regex(/(^| )openid( |$)/, 'must include openid').optional(),
  trustedEmailDomains: z.array(z.string().transform((d, c) => {
    const domain = normalizeDomain(d);
    if (!domain) c.addIssue({ code: 'custom', message: 'must be a domain name such as example.com (matched exactly: no wildcard, no leading dot; list each subdomain)' });
    return domain;
  })).optional(),
  /** Its security events (docs/upstream-signals.md): its keys (jwksUri, or configurationUrl naming them), the aud, the events acted on. */
  signals: z.object({
    issuer: z.string().url().optional(),
    jwksUri: z.string().url().optional(),
    configurationUrl: z.string().url().optional(),
    audiences: z.array(z.string().min(1)).min(1).optional(),
    events: z.array(z.string().url()).optional(),
    allowUntypedSets: z.boolean().optional(),
    poll: z.object({ endpoint: z.string().url(), tokenEndpoint: z.string().url(), everyMs: z.number().int().min(1000).optional() }).strict().optional(),
    stream: z.object({ tokenEndpoint: z.string().url() }).strict().optional(),
  }).strict().refine((s) => (s.jwksUri === undefined) !== (s.configurationUrl === undefined), 'give jwksUri or configurationUrl (one of them)').optional(),
}).strict();

const fileSchema = z.object({
  clients: z.array(clientSchema),
  organizations: z.array(organizationSchema).default([]),
  upstreams: z.array(upstreamSchema).default([]),
}).strict();

const envSchema = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  ISSUER: z.string().url().optional(),
  REDIS_URL: z.string().regex(/^(rediss?|redis\+sentinel|redis\+cluster):\/\//, 'must be redis://, rediss://, redis+sentinel:// or redis+cluster://').optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().optional(),
  CONFIG_FILE: z.string().default(new URL('../config.json', import.meta.url).pathname),
  JWKS_FILE: z.string().optional(),
  JWKS: z.string().optional(),
  COOKIE_KEYS: z.string().optional(),
  TRUST_PROXY: z.string().optional(),
  SERVICE_NAME: z.string().min(1).optional(),
  ALLOW_PRIVATE_FETCH_HOSTS: z.string().optional(),
  MAIL_OUTBOX: z.literal('log', { message: 'must be "log" (letters printed to the log) or unset' }).optional(),
  KEY_PREFIX: z.string().regex(/^[^{}]*$/, 'must not contain { or }').optional(),
  REDIS_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).optional(),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_PUBLIC: z.enum(['0', '1', 'true', 'false']).optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  PREVIOUS_REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be redis:// or rediss:// (the example adapter\'s store is a single Redis)').optional(),
  PREVIOUS_KEY_PREFIX: z.string().min(1).optional(),
  PREVIOUS_UNTIL: z.coerce.date().optional(),
});

function fail(where: string, error: z.ZodError): never {
  const issue = error.issues[0]!;
  const path = issue.path.length ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
  throw new ConfigurationError(`${where}: ${path}: ${issue.message}`);
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigurationError(`${what}: cannot read ${path} (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigurationError(`${what}: ${path} is not valid JSON (${(err as Error).message})`);
  }
}

/**
 * REDIS_URL forms: redis://[:pass@]host:port[/db], rediss://..., 
 * redis+sentinel://[:pass@]host:port,host:port/<master name>,
 * redis+cluster://[:pass@]host:port,host:port.
 * A single node and Sentinel reconnect on the plugin's capped schedule
 * (`redisReconnect`): the service answers 503 until its client is back.
 */
export function redisFromUrl(url: string): Redis | Cluster {
  if (url.startsWith('redis://') || url.startsWith('rediss://')) return new Redis(url, redisReconnect);
  const match = /^redis\+(sentinel|cluster):\/\/(?:([^@]*)@)?([^/]+)(?:\/(.*))?$/.exec(url);
  if (!match) throw new ConfigurationError(`REDIS_URL: cannot parse ${url}`);
  const [, kind, auth, hostList, rest] = match;
  const password = auth ? decodeURIComponent(auth.replace(/^[^:]*:/, '')) : undefined;
  const nodes = hostList!.split(',').map((h) => {
    const [host, port] = h.split(':');
    return { host: host!, port: Number(port || (kind === 'sentinel' ? 26379 : 6379)) };
  });
  if (kind === 'sentinel') {
    if (!rest) throw new ConfigurationError('REDIS_URL: redis+sentinel:// needs the master name as its path');
    return new Redis({ sentinels: nodes, name: rest, password, ...redisReconnect });
  }
  return new Cluster(nodes, { redisOptions: { password } });
}

/**
 * TRUST_PROXY: `0`/`false` (none), the number of proxies in front (`true` is
 * 1), or their addresses and CIDR ranges, comma-separated.
 */
function trustProxyFrom(value: string | undefined): TrustProxy {
  const v = (value ?? '0').trim();
  if (v === '' || v === '0' || v === 'false') return false;
  if (v === 'true') return 1;
  if (/^\d+$/.test(v)) {
    if (Number(v) > 20) throw new ConfigurationError(`environment: TRUST_PROXY: at most 20 proxies, got ${v}`);
    return Number(v);
  }
  const list = v.split(',').map((h) => h.trim()).filter(Boolean);
  try {
    blockList(list);
  } catch (err) {
    throw new ConfigurationError(`environment: TRUST_PROXY: ${(err as Error).message} (give the number of proxies, or their addresses or CIDR ranges)`);
  }
  return list;
}

/** Reads the reference provider's settings from the environment and CONFIG_FILE. */
export function settingsFromEnv(env: NodeJS.ProcessEnv): ReferenceSettings & { port: number; metrics?: { port: number; host: string }; shutdownTimeoutMs: number } {
  const parsedEnv = envSchema.safeParse(env);
  if (!parsedEnv.success) fail('environment', parsedEnv.error);
  const e = parsedEnv.data;

  const file = fileSchema.safeParse(readJson(e.CONFIG_FILE, 'CONFIG_FILE'));
  if (!file.success) fail(`CONFIG_FILE ${e.CONFIG_FILE}`, file.error);

  const ids = new Set<string>();
  file.data.clients.forEach((c, i) => {
    if (ids.has(c.client_id)) throw new ConfigurationError(`CONFIG_FILE ${e.CONFIG_FILE}: clients[${i}].client_id: duplicate "${c.client_id}"`);
    ids.add(c.client_id);
  });
  const upstreamIds = new Set<string>();
  file.data.upstreams.forEach((u, i) => {
    if (upstreamIds.has(u.id)) throw new ConfigurationError(`CONFIG_FILE ${e.CONFIG_FILE}: upstreams[${i}].id: duplicate "${u.id}"`);
    upstreamIds.add(u.id);
  });
  file.data.organizations.forEach((o, i) => o.clients.forEach((id, j) => {
    if (!ids.has(id)) throw new ConfigurationError(`CONFIG_FILE ${e.CONFIG_FILE}: organizations[${i}].clients[${j}]: unknown client "${id}"`);
  }));

  let jwks: ReferenceSettings['jwks'];
  if (e.JWKS_FILE || e.JWKS) {
    const raw = e.JWKS_FILE ? readJson(e.JWKS_FILE, 'JWKS_FILE') : (() => {
      try { return JSON.parse(e.JWKS!); } catch { throw new ConfigurationError('JWKS: not valid JSON'); }
    })();
    const keys = z.object({ keys: z.array(z.object({ kty: z.string(), d: z.string() }).passthrough()).min(1) }).safeParse(raw);
    if (!keys.success) fail(e.JWKS_FILE ? 'JWKS_FILE' : 'JWKS', keys.error);
    jwks = keys.data as ReferenceSettings['jwks'];
  }

  const issuer = e.ISSUER ?? `http://localhost:${e.PORT}`;
  // Letters hold sign-in codes: off loopback they go by SMTP, or to the log only when asked.
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(new URL(issuer).hostname);
  if (!e.SMTP_URL && !loopback && e.MAIL_OUTBOX !== 'log') {
    throw new ConfigurationError(`environment: SMTP_URL: required for the issuer ${issuer} (letters hold sign-in codes); set MAIL_OUTBOX=log to print them to the log instead`);
  }
  // This server speaks plain HTTP: for an https issuer, TLS ends at a proxy
  // in front, and oidc-provider marks cookies Secure only when it trusts that
  // proxy's X-Forwarded-Proto. An issuer on loopback is development.
  const trustProxy = trustProxyFrom(e.TRUST_PROXY);
  if (new URL(issuer).protocol === 'https:' && !loopback && trustProxy === false) {
    throw new ConfigurationError(`environment: TRUST_PROXY: required for the https issuer ${issuer}: this server speaks plain HTTP, so TLS ends at a proxy in front, and without trusting it cookies go out without Secure; set the number of proxies, or their addresses`);
  }
  // A development issuer on localhost talks to sites on localhost; anything
  // else must say which private hosts it trusts.
  const privateHosts = e.ALLOW_PRIVATE_FETCH_HOSTS !== undefined
    ? e.ALLOW_PRIVATE_FETCH_HOSTS.split(',').map((h) => h.trim()).filter(Boolean)
    : (new URL(issuer).hostname === 'localhost' ? ['localhost'] : []);

  return {
    port: e.PORT,
    issuer,
    allowPrivateFetchHosts: privateHosts,
    clients: file.data.clients as ReferenceSettings['clients'],
    organizations: file.data.organizations,
    upstreams: file.data.upstreams,
    redis: e.REDIS_URL ? redisFromUrl(e.REDIS_URL) : undefined,
    smtpUrl: e.SMTP_URL,
    ...(e.MAIL_OUTBOX ? { mailOutbox: e.MAIL_OUTBOX } : {}),
    mailFrom: e.MAIL_FROM,
    jwks,
    cookieKeys: e.COOKIE_KEYS?.split(',').map((k) => k.trim()).filter(Boolean),
    trustProxy,
    serviceName: e.SERVICE_NAME,
    keyPrefix: e.KEY_PREFIX,
    plugin: { ...(e.REDIS_TIMEOUT_MS ? { redisTimeoutMs: e.REDIS_TIMEOUT_MS } : {}), ...previousStoreOptions(e) },
    ...(e.METRICS_PORT ? { metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST } } : {}),
    metricsOnPublic: e.METRICS_PUBLIC === '1' || e.METRICS_PUBLIC === 'true',
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}
