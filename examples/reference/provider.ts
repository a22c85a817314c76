import { createHmac, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';

import type { Cluster, Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { ClientMetadata, Configuration, JWK, KoaContextWithOIDC } from 'oidc-provider';
import type { Transporter } from 'nodemailer';

import { createSignoutNotify, type Organization as PluginOrganization, type SignoutNotify, type SignoutNotifyOptions } from '../../src/index.ts';

import { negotiateLocale, t } from '../../src/i18n/index.ts';
import type { Logger } from '../../src/options.ts';
import { errorPage } from '../../views/error.ts';
import { createAccounts, type Accounts } from './accounts.ts';
import { sendPage as send } from '../../src/http/page.ts';
import { interactionRoutes } from './interactions.ts';
import { createLoginCodes, defaultLoginCodeLimits, type LoginCodeLimits } from './login-codes.ts';

/** The plugin's Organization, with admins and members named by email address. */
export type Organization = PluginOrganization;

export interface ReferenceSettings {
  issuer: string;
  clients: ClientMetadata[];
  organizations?: Organization[];
  /** Omitted: the embedded in-memory store. */
  redis?: Redis | Cluster;
  keyPrefix?: string;
  /** Omitted (with no transport): letters go to the log. */
  smtpUrl?: string;
  mailTransport?: Transporter;
  mailFrom?: string;
  /** Private signing keys; omitted: a development key made at start (with a warning). */
  jwks?: { keys: JWK[] };
  /** Keys that sign cookies, newest first; omitted: random (with a warning). */
  cookieKeys?: string[];
  /** Hostnames back-channel logout may reach on loopback or private addresses. */
  allowPrivateFetchHosts?: string[];
  /** Trust X-Forwarded-* (behind a TLS-terminating proxy). */
  trustProxy?: boolean;
  serviceName?: string;
  loginCodeLimits?: LoginCodeLimits;
  logger?: Logger;
  /** More plugin options (notify limits, letter queue, ...), passed through. */
  plugin?: Partial<Pick<SignoutNotifyOptions, 'notify' | 'letters' | 'contacts'>>;
}

export interface ReferenceProvider {
  provider: Provider;
  plugin: SignoutNotify;
  accounts: Accounts;
  listen(port: number, host?: string): Promise<Server>;
  close(): Promise<void>;
}

const ONE_DAY = 24 * 60 * 60;

/** Lifetimes (seconds) of the reference provider's records; the benchmark gives its baseline the same. */
export const REFERENCE_TTL = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  ClientCredentials: 10 * 60,
  IdToken: 60 * 60,
  Interaction: 60 * 60,
  RefreshToken: 14 * ONE_DAY,
  Session: 14 * ONE_DAY,
  Grant: 14 * ONE_DAY,
  DeviceCode: 10 * 60,
  BackchannelAuthenticationRequest: 10 * 60,
};

/**
 * The reference identity provider: oidc-provider with the plugin, accounts
 * keyed by email address and sign-in by emailed code. `npm start` runs it.
 */
export async function createReferenceProvider(settings: ReferenceSettings): Promise<ReferenceProvider> {
  const serviceName = settings.serviceName ?? 'Sign-in service';
  const plugin = createSignoutNotify({
    redis: settings.redis,
    keyPrefix: settings.keyPrefix,
    serviceName,
    mail: { transport: settings.mailTransport, smtpUrl: settings.smtpUrl, from: settings.mailFrom ?? 'Sign-in service <no-reply@localhost>' },
    contacts: async (accountId) => {
      const account = await accounts.get(accountId);
      return account && { email: account.email, locale: account.locale };
    },
    logger: settings.logger,
    allowPrivateFetchHosts: settings.allowPrivateFetchHosts,
    ...settings.plugin,
  });
  const accounts = createAccounts(plugin.store);
  const { logger } = plugin;
  // The configuration names people by address; the plugin knows account ids.
  // Listed people get their account now, as an organization would provision it.
  const ids = async (emails: string[]) => Promise.all(emails.map(async (email) => (await accounts.findOrCreate(email)).accountId));
  plugin.organizations.define(await Promise.all((settings.organizations ?? []).map(async (org) => ({
    ...org, admins: await ids(org.admins), members: await ids(org.members),
  }))));

  let jwks = settings.jwks;
  if (!jwks) {
    logger.warn('reference provider: no JWKS configured, signing with a development key made at start-up; set JWKS_FILE or JWKS for anything but development');
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    jwks = { keys: [{ ...(await exportJWK(privateKey)), use: 'sig', alg: 'RS256', kid: `dev-${randomBytes(4).toString('hex')}` } as JWK] };
  }
  let cookieKeys = settings.cookieKeys;
  if (!cookieKeys?.length) {
    logger.warn('reference provider: no COOKIE_KEYS configured, using random keys (sessions end on restart)');
    cookieKeys = [randomBytes(32).toString('base64url')];
  }
  const secret = createHmac('sha256', cookieKeys[0]!).update('reference-provider').digest('base64url');
  const pairwiseSalt = createHmac('sha256', cookieKeys[0]!).update('pairwise').digest();

  const configuration: Configuration = plugin.configure({
    clients: settings.clients,
    jwks,
    cookies: { keys: cookieKeys },
    findAccount: async (_ctx, sub) => {
      const account = await accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => ({ sub, email: account.email, email_verified: true }),
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'email', 'offline_access'],
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    subjectTypes: ['public', 'pairwise'],
    pairwiseIdentifier: async (_ctx, accountId, client) =>
      createHmac('sha256', pairwiseSalt).update(`${client.sectorIdentifier}\0${accountId}`).digest('base64url'),
    ttl: REFERENCE_TTL,
    async renderError(ctx: KoaContextWithOIDC, out, error) {
      const locale = negotiateLocale({ acceptLanguage: ctx.get('accept-language') });
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      send(ctx, errorPage({ locale, serviceName, title: t(locale, 'error.title'), message: out.error_description ?? out.error, status }), status);
    },
  });

  const provider = new Provider(settings.issuer, configuration);
  if (settings.trustProxy) provider.proxy = true;

  const loginCodes = createLoginCodes(plugin.store, secret, settings.loginCodeLimits ?? defaultLoginCodeLimits);
  const router = interactionRoutes({ provider, accounts, loginCodes, mailer: plugin.mailer, serviceName, secret });
  provider.use(router.routes());
  plugin.attach(provider);

  let server: Server | undefined;
  return {
    provider,
    plugin,
    accounts,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server = provider.listen(port, host, () => resolve(server!));
        server.once('error', reject);
      });
    },
    async close() {
      if (server) {
        server.closeAllConnections();
        await new Promise((resolve) => server!.close(resolve));
      }
      await plugin.close();
    },
  };
}
