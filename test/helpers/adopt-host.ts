/**
 * A host that adopts the plugin (issue 33): oidc-provider 9 with its own
 * sign-in (no page: the person named by `login_hint` signs in and allows what
 * the site asks), first on its previous adapter alone, then restarted with
 * the plugin and `previousAdapter` on the same port, cookie keys, signing key
 * and store. The calls a site and a browser make, as raw HTTP.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';

import type { Cluster, Redis } from 'ioredis';
import Provider from 'oidc-provider';
import type { Adapter, ClientMetadata, Configuration, JWK } from 'oidc-provider';

import { createSignoutNotify, type SignoutNotify, type SignoutNotifyOptions } from '../../src/index.ts';
import { ImportRunningError, type PreviousAdapter } from '../../src/adoption.ts';
import { Agent } from './agent.ts';
import { freePort } from './net.ts';
import { hostRedisAdapter, type HostRedisAdapter } from './previous/example-redis.ts';
import { dropPrefix, testRedis, uniquePrefix } from './redis.ts';
import { RP } from './reference.ts';

export type Line = { level: string; message: string; fields?: Record<string, unknown> };

export interface AdoptHost {
  issuer: string;
  /** The plugin, once switched. */
  plugin?: SignoutNotify;
  provider: Provider;
  lines: Line[];
  /** Stops oidc-provider on its previous adapter and starts it again with the plugin (`previousAdapter` among the options). */
  switchToPlugin(options: Partial<SignoutNotifyOptions>): Promise<SignoutNotify>;
  close(): Promise<void>;
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
}

const basic = (site: ClientMetadata) => `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;

/** The host's configuration, the same before and after the switch (`adapter` before, the plugin's after). */
function hostConfiguration(clients: ClientMetadata[], key: JWK, adapter?: PreviousAdapter): Configuration {
  return {
    clients,
    jwks: { keys: [key] },
    cookies: { keys: ['adopt-host-cookie-key-0123456789'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 900, RefreshToken: 3600, IdToken: 600, AuthorizationCode: 600 },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    scopes: ['openid', 'offline_access'],
    features: { devInteractions: { enabled: false }, revocation: { enabled: true }, introspection: { enabled: true } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Every refresh rotates (the plugin's rule too), and a site allowed refresh_token always gets one.
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ...(adapter ? { adapter: adapter as new (name: string) => Adapter } : {}),
  };
}

/** The host's sign-in: whoever `login_hint` names (or the session's person) signs in and allows the scopes asked. */
function hostSignIn(provider: Provider): void {
  provider.use(async (ctx, next) => {
    if (!/^\/interaction\/[\w-]+$/.test(ctx.path)) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const accountId = details.session?.accountId ?? (typeof details.params.login_hint === 'string' ? details.params.login_hint : '');
    if (!accountId) {
      ctx.status = 400;
      ctx.body = 'login_hint needed';
      return undefined;
    }
    const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined)
      ?? new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
    return undefined;
  });
}

export async function startAdoptHost(opts: { clients: ClientMetadata[]; before: PreviousAdapter; redis: Redis | Cluster; keyPrefix: string; beforeProvider?: ((provider: Provider) => void) | undefined }): Promise<AdoptHost> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const key = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'adopt' } as JWK;
  const lines: Line[] = [];
  const logger = Object.fromEntries((['info', 'warn', 'error'] as const).map((level) => [level, (message: string, fields?: Record<string, unknown>) => { lines.push({ level, message, fields }); }])) as unknown as NonNullable<SignoutNotifyOptions['logger']>;
  let server: Server;
  const listen = async (provider: Provider) => {
    server = provider.listen(port, '127.0.0.1') as unknown as Server;
    await new Promise((r) => server.once('listening', r));
  };
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };

  const host: AdoptHost = {
    issuer,
    lines,
    provider: new Provider(issuer, hostConfiguration(opts.clients, key, opts.before)),
    async switchToPlugin(options) {
      await stop();
      const plugin = createSignoutNotify({
        redis: opts.redis, keyPrefix: opts.keyPrefix, contacts: async () => undefined, logger, ...options,
      });
      host.plugin = plugin;
      host.provider = new Provider(issuer, plugin.configure(hostConfiguration(opts.clients, key)));
      hostSignIn(host.provider);
      plugin.attach(host.provider);
      await listen(host.provider);
      return plugin;
    },
    async close() {
      await stop();
      await host.plugin?.close();
    },
  };
  opts.beforeProvider?.(host.provider);
  hostSignIn(host.provider);
  await listen(host.provider);
  return host;
}

/** A PKCE pair (S256). */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * The site sends the browser to the authorization endpoint; the browser
 * follows every redirect (through the host's sign-in) to the site's callback.
 * Resolves with the code (and its PKCE verifier) or the error the callback got.
 */
export async function authorize(issuer: string, agent: Agent, site: ClientMetadata, opts: { loginHint?: string; scope?: string; prompt?: string } = {}): Promise<{ code?: string; verifier: string; error?: string }> {
  const { verifier, challenge } = pkce();
  const redirect = site.redirect_uris![0]!;
  const url = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries({
    client_id: site.client_id, response_type: 'code', redirect_uri: redirect, scope: opts.scope ?? 'openid', state: randomBytes(8).toString('hex'),
    code_challenge: challenge, code_challenge_method: 'S256',
    ...(opts.loginHint ? { login_hint: opts.loginHint } : {}), ...(opts.prompt ? { prompt: opts.prompt } : {}),
  })) url.searchParams.set(k, v);
  const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(RP));
  if (!res.location?.startsWith(redirect)) throw new Error(`the authorization did not reach the callback: ${res.status} ${res.url}\n${res.body.slice(0, 800)}`);
  const back = new URL(res.location).searchParams;
  return { code: back.get('code') ?? undefined, verifier, error: back.get('error') ?? undefined };
}

/** The token endpoint as a site calls it: status and answer. */
export async function tokenCall(issuer: string, site: ClientMetadata, body: Record<string, string>): Promise<{ status: number; json: Record<string, string> }> {
  const res = await fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic(site), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
  return { status: res.status, json: await res.json() as Record<string, string> };
}

export const exchange = (issuer: string, site: ClientMetadata, code: string, verifier: string) =>
  tokenCall(issuer, site, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: site.redirect_uris![0]! });

export const refresh = (issuer: string, site: ClientMetadata, refreshToken: string) =>
  tokenCall(issuer, site, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** Introspection (RFC 7662) by the site: the answer. */
export async function introspect(issuer: string, site: ClientMetadata, token: string, hint?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${issuer}/token/introspection`, { method: 'POST', headers: { authorization: basic(site), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}) }) });
  if (res.status !== 200) throw new Error(`introspection answered ${res.status}`);
  return await res.json() as Record<string, unknown>;
}

/** Revocation (RFC 7009) by the site: the status. */
export async function revoke(issuer: string, site: ClientMetadata, token: string): Promise<number> {
  const res = await fetch(`${issuer}/token/revocation`, { method: 'POST', headers: { authorization: basic(site), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }) });
  await res.arrayBuffer();
  return res.status;
}

/** The console's JSON API as the person's browser calls it. */
export async function consoleApi(issuer: string, agent: Agent, method: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await agent.request(method, `${issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: issuer });
  return { status: res.status, body: res.body ? JSON.parse(res.body) as unknown : undefined };
}

/** One person's sign-ins before the switch, in one browser: at site A (offline_access, refreshed once: `rtA1` consumed, `rtA2` live) and at site B (bound to the session), and a code at A never exchanged. */
export interface OldSignIns {
  accountId: string;
  agent: Agent;
  atA2: string;
  rtA1: string;
  rtA2: string;
  atB: string;
  rtB: string;
  code: { code: string; verifier: string };
}

export async function signInBefore(issuer: string, accountId: string, siteA: ClientMetadata, siteB: ClientMetadata, agent = new Agent()): Promise<OldSignIns> {
  const a = await authorize(issuer, agent, siteA, { loginHint: accountId, scope: 'openid offline_access', prompt: 'consent' });
  const first = await exchange(issuer, siteA, a.code!, a.verifier);
  if (first.status !== 200) throw new Error(`exchange at A: ${JSON.stringify(first.json)}`);
  const second = await refresh(issuer, siteA, first.json.refresh_token!);
  if (second.status !== 200) throw new Error(`refresh at A: ${JSON.stringify(second.json)}`);
  const b = await authorize(issuer, agent, siteB, { loginHint: accountId });
  const atB = await exchange(issuer, siteB, b.code!, b.verifier);
  if (atB.status !== 200 || !atB.json.refresh_token) throw new Error(`exchange at B: ${JSON.stringify(atB.json)}`);
  const unexchanged = await authorize(issuer, agent, siteA);
  return {
    accountId, agent,
    atA2: second.json.access_token!, rtA1: first.json.refresh_token!, rtA2: second.json.refresh_token!,
    atB: atB.json.access_token!, rtB: atB.json.refresh_token!,
    code: { code: unexchanged.code!, verifier: unexchanged.verifier },
  };
}

/** Runs `run` (an import) once no other run holds the import's lease: a run killed by SIGKILL holds it until it lapses. */
export async function onceLeaseLapsed<T>(run: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof ImportRunningError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(500, err.heldForMs + 10)));
    }
  }
}

/** A host on its copy of oidc-provider's example Redis adapter, under a prefix of its own (`name`), not switched yet; `close()` removes it all. */
export async function exampleRedisHost(name: string, clients: ClientMetadata[]): Promise<{ host: AdoptHost; before: HostRedisAdapter; close(): Promise<void> }> {
  const redis = testRedis();
  const prefix = uniquePrefix(name);
  const before = hostRedisAdapter(`${prefix}previous:`);
  const host = await startAdoptHost({ clients, before: before.Adapter, redis, keyPrefix: prefix });
  return {
    host, before,
    async close() {
      await host.close();
      await before.close();
      await dropPrefix(redis, prefix);
      await redis.quit();
    },
  };
}
