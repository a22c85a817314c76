/**
 * The one host every server of the benchmark runs (bench/servers.ts starts
 * them): oidc-provider with the same client (client_secret_basic), signing
 * key, TTLs, scopes, opaque tokens, refresh tokens issued and rotated, and
 * accounts in memory. A hands this configuration to `plugin.configure()`;
 * B, C and D use it as it is, on their own adapter.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';

import { exportJWK, generateKeyPair } from 'jose';
import type Provider from 'oidc-provider';
import type { ClientMetadata, Configuration, JWK } from 'oidc-provider';

import { REFERENCE_TTL } from '../examples/reference/provider.ts';
import type { Logger } from '../src/host.ts';

export const CLIENT: ClientMetadata = {
  client_id: 'bench-site',
  client_secret: 'bench-site-secret-0123456789abcdef0123',
  client_name: 'Bench Site',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
  post_logout_redirect_uris: ['https://site.example/'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
};

export const BASIC_AUTH = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT.client_id)}:${encodeURIComponent(CLIENT.client_secret!)}`).toString('base64')}`;

/** The reference provider's TTLs; every server gets the same, and bench/run.ts checks the models agree. */
export const TTL = REFERENCE_TTL;

/** Settings every server shares; made once per run by {@link hostKeys}. */
export interface CommonSettings {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
  port: number;
}

/** A run's signing key and cookie key, the same on every server of the run. */
export async function hostKeys(): Promise<Omit<CommonSettings, 'port'>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), use: 'sig', alg: 'RS256', kid: 'bench' } as JWK] },
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
}

/** Warnings and errors go to stderr (and are counted); info is dropped. */
export function benchLogger(name: string): Logger & { warnings: number; errors: number } {
  const logger = {
    warnings: 0,
    errors: 0,
    info() {},
    warn(message: string, fields?: Record<string, unknown>) {
      logger.warnings += 1;
      console.error(`[${name}] warn: ${message}`, fields ?? '');
    },
    error(message: string, fields?: Record<string, unknown>) {
      logger.errors += 1;
      console.error(`[${name}] error: ${message}`, fields ?? '');
    },
  };
  return logger;
}

/** The host's configuration, the same on A, B, C and D (A hands it to `plugin.configure()`). */
export function hostConfiguration(settings: CommonSettings, accounts: Map<string, string>): Configuration {
  return {
    clients: [CLIENT],
    jwks: settings.jwks,
    cookies: { keys: settings.cookieKeys },
    findAccount: async (_ctx, sub) => {
      const email = accounts.get(sub);
      if (email === undefined) return undefined;
      return { accountId: sub, claims: () => ({ sub, email, email_verified: true }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'email', 'offline_access'],
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: true },
    },
    // As the plugin sets them (src/provider/configure.ts).
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: TTL,
  };
}

export function listen(provider: Provider, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = provider.listen(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** A 500 in either server is a benchmark error: log it. */
export function countProviderErrors(provider: Provider, logger: Logger): void {
  provider.on('server_error', (_ctx: unknown, err: Error) => logger.error('server_error', { reason: err.message }));
}
