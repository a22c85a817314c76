import { domainToUnicode } from 'node:url';

import type { Cluster, Redis } from 'ioredis';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { createReferenceProvider, type ReferenceProvider, type ReferenceSettings } from '../../examples/reference/provider.ts';
import { Agent, formFor, type Response } from './agent.ts';
import { freePort } from './net.ts';
import { documentedFetch } from './openapi.ts';
import { dropPrefix, testRedis, uniquePrefix } from './redis.ts';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from './smtp.ts';
import { throwawayTls, type ThrowawayTls } from './tls.ts';

export const RP = 'http://127.0.0.1:9';

/** A confidential site allowed refresh tokens; its redirect target is never contacted. */
export function siteClient(clientId: string, extra: Partial<ClientMetadata> = {}): ClientMetadata {
  return {
    client_id: clientId,
    client_secret: `${clientId}-secret-0123456789abcdef`,
    client_name: `Site ${clientId}`,
    client_uri: 'https://site.example',
    redirect_uris: [`${RP}/${clientId}/callback`],
    post_logout_redirect_uris: [`${RP}/${clientId}/signed-out`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    ...extra,
  };
}

const silent = { info() {}, warn() {}, error() {} };

export interface Harness {
  issuer: string;
  reference: ReferenceProvider;
  smtp: SmtpSink;
  /** The test's own Redis client (undefined for the embedded store). */
  redis?: Redis | Cluster;
  prefix: string;
  /** With `tls: true`: the throwaway certificate the provider serves, and the pool that trusts it. */
  tls?: ThrowawayTls;
  close(): Promise<void>;
}

/**
 * The reference provider on a free port (or `port`), on real Redis (or
 * embedded, or the given `client`: the Cluster pass) and a real SMTP sink.
 * Its issuer is http://127.0.0.1:<port>, or http://localhost:<port> with
 * `host: 'localhost'`: passkeys need a domain (browsers refuse an IP address
 * as WebAuthn RP ID); it listens on 127.0.0.1 either way. With `tls: true` it
 * serves HTTPS (issuer https://...) with a certificate made for this run
 * (or the one given: a test's site may serve it too), which only the
 * harness' `tls.dispatcher` trusts: give it to the test's requests
 * (`discover` does, and `new Agent(h.tls.dispatcher)`). Closed with the harness.
 */
export async function startHarness(name: string, opts: { clients: ClientMetadata[]; embedded?: boolean; smtp?: SmtpSinkOptions; client?: Redis | Cluster; port?: number; host?: 'localhost' | '127.0.0.1'; tls?: boolean | ThrowawayTls } & Partial<ReferenceSettings>): Promise<Harness> {
  const { embedded, smtp: smtpOptions, client, port: chosen, host, tls: withTls, ...settings } = opts;
  const smtp = await startSmtpSink(smtpOptions);
  const prefix = uniquePrefix(name);
  const redis = embedded ? undefined : (client ?? testRedis());
  const port = chosen ?? await freePort();
  const tls = withTls === true ? await throwawayTls() : withTls || undefined;
  const issuer = `${tls ? 'https' : 'http'}://${host ?? '127.0.0.1'}:${port}`;
  const reference = await createReferenceProvider({
    logger: silent,
    ...settings,
    issuer,
    redis,
    keyPrefix: prefix,
    smtpUrl: smtp.url,
    cookieKeys: ['test-cookie-key-0123456789'],
  });
  await reference.listen(port, '127.0.0.1', tls);
  return {
    issuer, reference, smtp, redis, prefix, tls,
    async close() {
      await reference.close();
      await smtp.close();
      await tls?.close();
      if (redis) {
        await dropPrefix(redis, prefix);
        await redis.quit();
      }
    },
  };
}

/** openid-client configuration for one of the harness' clients, from discovery. */
export function discover(h: Harness, client: ClientMetadata): Promise<oidc.Configuration> {
  return oidc.discovery(
    new URL(h.issuer),
    client.client_id,
    { client_secret: client.client_secret },
    oidc.ClientSecretBasic(client.client_secret!),
    h.tls ? { [oidc.customFetch]: h.tls.fetch } : { execute: [oidc.allowInsecureRequests] },
  );
}

export interface SignIn {
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  /** The page the browser ended on before the callback. */
  pages: Response[];
  code: string;
}

/**
 * The whole flow a person goes through: the site sends the browser to the
 * authorization endpoint, the person types their address, reads the code in
 * the letter, types it, allows the site; the site redeems the code (PKCE).
 */
export async function signIn(h: Harness, config: oidc.Configuration, agent: Agent, email: string, opts: { scope?: string; prompt?: string; redirectUri?: string; state?: string; nonce?: string } = {}): Promise<SignIn> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = opts.state ?? oidc.randomState();
  const redirectUri = opts.redirectUri ?? (config.clientMetadata().redirect_uris as string[] | undefined)?.[0] ?? `${RP}/${config.clientMetadata().client_id}/callback`;
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: opts.scope ?? 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(opts.prompt ? { prompt: opts.prompt } : {}),
    ...(opts.nonce ? { nonce: opts.nonce } : {}),
  });
  const isCallback = (u: string) => u.startsWith(redirectUri);
  const { res, pages, code } = await throughSignInPages(h, agent, await agent.get(url.href), isCallback, email);
  if (!res.location || !isCallback(res.location)) throw new Error(`sign-in did not reach the callback: ${res.status} ${res.url}`);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(res.location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: opts.nonce });
  return { tokens, pages, code };
}

/**
 * The service's sign-in pages as a person goes through them, from the first
 * response on: address, code from the letter, consent; stops where `stop`
 * says (the site's callback).
 */
export async function throughSignInPages(h: Harness, agent: Agent, start: Response, stop: (url: string) => boolean, email: string): Promise<{ res: Response; pages: Response[]; code: string }> {
  const pages: Response[] = [];
  let res = await agent.follow(start, stop);
  let code = '';
  for (let step = 0; step < 6 && !(res.location && stop(res.location)); step += 1) {
    pages.push(res);
    if (res.body.includes('name="email"')) {
      const sent = h.smtp.letters.length;
      res = await agent.follow(await agent.submit(res, formFor(res.body, '/email'), { email }), stop);
      // The sink's parser shows an IDNA domain in Unicode (v@xn--bcher-kva.test as v@bücher.test).
      const spellings = [email, email.replace(/@([^@]*)$/, (_, domain: string) => `@${domainToUnicode(domain)}`)];
      const letter = await h.smtp.waitFor((l, i = h.smtp.letters.indexOf(l)) => i >= sent && l.to !== undefined && spellings.some((s) => JSON.stringify(l.to).includes(s)) && /\b\d{6}\b/.test(l.subject ?? ''));
      code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
    } else if (res.body.includes('name="code"')) {
      res = await agent.follow(await agent.submit(res, formFor(res.body, '/code'), { code }), stop);
    } else if (res.body.includes('/confirm"')) {
      res = await agent.follow(await agent.submit(res, formFor(res.body, '/confirm')), stop);
    } else {
      throw new Error(`unexpected page ${res.status} ${res.url}:\n${res.body.slice(0, 1500)}`);
    }
  }
  return { res, pages, code };
}

/** A site's POST /api/notify (HTTP Basic, JSON): the status and the answer (as the OpenAPI document says). */
export async function notifyAs(h: Harness, client: ClientMetadata, message: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const res = await documentedFetch(`${h.issuer}/api/notify`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify(message),
  });
  return { status: res.status, body: await res.json() };
}

/** The error code of a failed openid-client call. */
/**
 * Waits until the reference provider has no letter in hand or queued (at most
 * 5 s), and returns how many are left: its worker's claim and done marks are
 * store commands, which a test counting a request's commands must not see.
 */
export async function lettersSettled(h: Harness): Promise<number> {
  for (let i = 0; i < 100 && (await h.reference.plugin.letters.pending()) > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
  return h.reference.plugin.letters.pending();
}

export async function oauthError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as { error?: string }).error ?? `unexpected: ${(err as Error).message}`;
  }
  return 'no error';
}
