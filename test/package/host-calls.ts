/** What the consumer test's host app is called with and how a site and a person use it (test/package/consumer.test.ts). */
import { createPrivateKey, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
import type { Adapter, ClientMetadata, JWK } from 'oidc-provider';
import * as oidc from 'openid-client';
import { Agent, formFor } from '../helpers/agent.ts';
import { documentedFetch, type OpenApiDocument } from '../helpers/openapi.ts';
import { REDIS_URL } from '../helpers/redis.ts';
import { type SmtpSink } from '../helpers/smtp.ts';

export const SITE = {
  client_id: 'host-site',
  client_secret: `host-site-secret-${randomBytes(8).toString('hex')}`,
  client_name: 'Host Site',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
  post_logout_redirect_uris: ['https://site.example/signed-out'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
};

/** The host's settings, as its deployment gives them (environment). */
export function hostEnv(issuer: string, port: number, redisUrl: string, smtp: SmtpSink, signingKey: string): Record<string, string> {
  return {
    ISSUER: issuer,
    PORT: String(port),
    REDIS_URL: redisUrl,
    SMTP_URL: smtp.url,
    HOST_CLIENTS: JSON.stringify([SITE]),
    HOST_SIGNING_KEY: signingKey,
    HOST_COOKIE_KEY: 'host-cookie-key-0123456789abcdef',
  };
}

/**
 * An empty Redis database of its own: the host uses the plugin's default key
 * prefix, as a host would. Claimed with SET NX, so two runs on one Redis
 * (two checkouts testing at once) never share one.
 */
export async function emptyDatabase(): Promise<{ url: string; client: Redis }> {
  const claim = 'osn-consumer-test:claim';
  for (let db = 15; db >= 1; db -= 1) {
    const url = new URL(REDIS_URL);
    url.pathname = `/${db}`;
    const client = new Redis(url.href, { maxRetriesPerRequest: 2 });
    if ((await client.set(claim, String(process.pid), 'EX', 1800, 'NX')) === 'OK') {
      if ((await client.dbsize()) === 1) return { url: url.href, client };
      await client.del(claim);
    }
    await client.quit();
  }
  throw new Error(`no empty database among 1-15 at ${REDIS_URL} for the consumer test`);
}

export const basic = `Basic ${Buffer.from(`${SITE.client_id}:${SITE.client_secret}`).toString('base64')}`;

export async function postForm(issuer: string, path: string, form: Record<string, string>) {
  const res = await fetch(`${issuer}${path}`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
}

/** POST /api/notify, its answer checked against `document` (the one the tarball ships). */
export async function notify(issuer: string, body: Record<string, string>, document: OpenApiDocument) {
  const res = await documentedFetch(`${issuer}/api/notify`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }, document);
  return { status: res.status, json: await res.json() as Record<string, unknown> };
}

export function discover(issuer: string): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(issuer), SITE.client_id, { client_secret: SITE.client_secret },
    oidc.ClientSecretBasic(SITE.client_secret), { execute: [oidc.allowInsecureRequests] });
}

export const isCallback = (u: string) => u.startsWith(SITE.redirect_uris[0]!);

/** The relying site sends the browser to sign in: the host's own login page. */
export async function startSignIn(config: oidc.Configuration, agent: Agent) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: SITE.redirect_uris[0]!,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const loginPage = await agent.follow(await agent.get(url.href), isCallback);
  expect(loginPage.status, loginPage.body).to.equal(200);
  return { loginPage, verifier, state };
}

/** The host's own login page takes a name; consent is the host's. */
export async function signIn(config: oidc.Configuration, agent: Agent, login: string) {
  const { loginPage, verifier, state } = await startSignIn(config, agent);
  const done = await agent.follow(await agent.submit(loginPage, formFor(loginPage.body, '/login'), { login }), isCallback);
  expect(done.location, `${done.status} ${done.url}\n${done.body}`).to.match(/^https:\/\/site\.example\/callback\?code=/);
  return oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
}

export const until = async (what: string, check: () => boolean, timeoutMs = 20_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/** The ids of the site's letters to `to` (subject `Batch ...`: not the service's security notices, e.g. of a new browser). */
export const notificationIds = (smtp: SmtpSink, to: string) => smtp.letters
  .filter((l) => JSON.stringify(l.to).includes(to) && l.subject?.startsWith('Batch '))
  .map((l) => String(l.headers.get('x-notification-id')));

/** What oidc-provider writes through `adapter` (a store before the switch) when alice signs in at the host's site: a grant, an access and a refresh token. */
export async function mintSignIn(adapter: ((model: string) => Adapter) | (new (model: string) => Adapter), signingKey: string): Promise<{ access: string; refresh: string }> {
  const provider = new Provider('http://127.0.0.1:9', {
    clients: [SITE as ClientMetadata], adapter: adapter as new (model: string) => Adapter,
    jwks: { keys: [{ ...createPrivateKey(signingKey).export({ format: 'jwk' }), alg: 'RS256', use: 'sig' } as JWK] },
    features: { devInteractions: { enabled: false } },
  });
  const client = (await provider.Client.find(SITE.client_id))!;
  const grant = new provider.Grant({ accountId: 'alice', clientId: SITE.client_id });
  grant.addOIDCScope('openid offline_access');
  const grantId = await grant.save();
  const access = await new provider.AccessToken({ accountId: 'alice', client, grantId, scope: 'openid', gty: 'authorization_code' }).save();
  const refresh = await new provider.RefreshToken({ accountId: 'alice', client, grantId, scope: 'openid offline_access', gty: 'authorization_code', rotations: 0 }).save();
  return { access, refresh };
}
