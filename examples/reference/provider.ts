import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

import type { Cluster, Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { interactionPolicy } from 'oidc-provider';
import type { ClientMetadata, Configuration, JWK, KoaContextWithOIDC } from 'oidc-provider';
import type { Transporter } from 'nodemailer';

import { createSignoutNotify, type Logger, type Organization as PluginOrganization, type SignoutNotify, type SignoutNotifyOptions } from '../../src/index.ts';
import { negotiateLocale, sendErrorPage, t } from '../../src/pages.ts';
import { createAccounts, type Accounts } from './accounts.ts';
import { accountDeletion } from './delete-account.ts';
import { accountRoutes } from './account-routes.ts';
import { trustProxies, type TrustProxy } from './client-ip.ts';
import { SELECT_ACCOUNT } from './interaction-kit.ts';
import { interactionRoutes } from './interactions.ts';
import { createLoginCodes, defaultLoginCodeLimits, type LoginCodeLimits } from './login-codes.ts';
import { createOperations, type Operations } from './operations.ts';
import { signInWays, type SignInWays } from './sign-in-ways.ts';
import { ACR_VALUES, acrValuesCheck } from './strength.ts';
import { createUpstreamLinks, type Upstream } from './upstreams.ts';
import { linkedAccountLookup, signalUpstreams } from './upstream-signals.ts';

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
  /** 'log': letters to the log although the issuer is not on loopback (development only). */
  mailOutbox?: 'log';
  mailFrom?: string;
  /** Private signing keys; omitted: a development key made at start (with a warning). */
  jwks?: { keys: JWK[] };
  /** Keys that sign cookies, newest first; omitted: random (with a warning). */
  cookieKeys?: string[];
  /** Hostnames back-channel logout may reach on loopback or private addresses. */
  allowPrivateFetchHosts?: string[];
  /**
   * oidc-provider's outgoing requests (back-channel logout, a site's
   * jwks_uri): how they are sent. Omitted: Node's fetch. A way to trust a
   * private CA for those requests alone.
   */
  fetch?: Configuration['fetch'];
  /**
   * The proxies in front (TLS termination, load balancers): how many, or
   * their addresses. `X-Forwarded-*` are read through them only; the client's
   * IP is the entry the nearest untrusted hop wrote. `true` is 1.
   */
  trustProxy?: TrustProxy;
  serviceName?: string;
  loginCodeLimits?: LoginCodeLimits;
  /** Social sign-ins (CONFIG_FILE `upstreams`). */
  upstreams?: Upstream[];
  /** The plugin's `console.recentSignInSeconds` (default 300): how recent a sign-in adding a passkey or a link needs. */
  recentSignInSeconds?: number;
  logger?: Logger;
  /** Serve /metrics on the public listener too (otherwise only where the caller serves `operations.registry`). */
  metricsOnPublic?: boolean;
  /** A service session's lifetime (seconds; default REFERENCE_TTL.Session, 14 days): short in tests of its expiry. */
  sessionTtlSeconds?: number;
  /** The plugin's upstreamSignals limits and Global Token Revocation (the upstreams come from `upstreams[].signals`). */
  upstreamSignals?: Partial<Pick<NonNullable<SignoutNotifyOptions['upstreamSignals']>, 'maxAgeSeconds' | 'maxBodyBytes' | 'globalTokenRevocation'>>;
  /** More plugin options (notify limits, letter queue, ...), passed through. */
  plugin?: Partial<Pick<SignoutNotifyOptions, 'notify' | 'letters' | 'backchannelLogout' | 'contacts' | 'redisTimeoutMs' | 'refreshReuseLeeway' | 'publicClientLeeway' | 'lastUsedInterval' | 'theftNotice' | 'sessionExpiry' | 'securityNotices'>>;
}

export interface ReferenceProvider {
  provider: Provider;
  plugin: SignoutNotify;
  accounts: Accounts;
  /** Deletes a person: the reference provider's own records of them, then the plugin's deleteAccount ("Delete my account"). */
  deleteAccount(accountId: string): Promise<void>;
  /** Health, readiness and metrics (docs/operations.md "Running in production". */
  operations: Operations;
  /**
   * Listens on `port`: plain HTTP (behind a proxy that ends TLS), or HTTPS
   * with `tls`'s PEM key and certificate (the issuer is then https).
   */
  listen(port: number, host?: string, tls?: { key: string; cert: string }): Promise<Server>;
  /**
   * Graceful stop: readiness turns 503, the listener takes no new connection,
   * requests in flight and the letters in hand are finished, then the plugin
   * closes (not the Redis client: the caller's). Past `timeoutMs` the
   * connections left are cut. Resolves true when everything finished in time.
   */
  shutdown(timeoutMs: number): Promise<boolean>;
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
 * oidc-provider's prompts (login, consent) with `select_account` after login:
 * `prompt=select_account` offers "Continue as ..." or "Use another account".
 * A site's `acr_values` above the session's sign-in asks for a new one (strength.ts).
 */
function referencePolicy() {
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(acrValuesCheck());
  policy.add(new interactionPolicy.Prompt({ name: SELECT_ACCOUNT, requestable: true }), policy.findIndex((p) => p.name === 'login') + 1);
  return policy;
}

/**
 * The reference identity provider: oidc-provider with the plugin, accounts
 * keyed by email address and sign-in by emailed code. `npm start` runs it.
 */
export async function createReferenceProvider(settings: ReferenceSettings): Promise<ReferenceProvider> {
  const serviceName = settings.serviceName ?? 'Sign-in service';
  let ways: SignInWays | undefined;
  let account: ReturnType<typeof accountRoutes> | undefined;
  const plugin = createSignoutNotify({
    redis: settings.redis,
    keyPrefix: settings.keyPrefix,
    serviceName,
    mail: { transport: settings.mailTransport, smtpUrl: settings.smtpUrl, from: settings.mailFrom ?? 'Sign-in service <no-reply@localhost>', outbox: settings.mailOutbox },
    contacts: async (accountId) => {
      const account = await accounts.get(accountId);
      return account && { email: account.email, locale: account.locale, name: account.name };
    },
    console: { sections: async (person) => [...(await ways?.sections(person) ?? []), ...(account?.sections(person) ?? [])], recentSignInSeconds: settings.recentSignInSeconds },
    logger: settings.logger,
    allowPrivateFetchHosts: settings.allowPrivateFetchHosts,
    // Upstreams that send security events (CONFIG_FILE upstreams[].signals): heard at /upstream-signals/<id>.
    upstreamSignals: {
      upstreams: signalUpstreams(settings.upstreams ?? []),
      account: (upstreamId, subject) => linkedAccount(upstreamId, subject),
      accountByEmail: async (email) => (await accounts.findByEmail(email))?.accountId,
      ...settings.upstreamSignals,
    },
    ...settings.plugin,
    // People sign in here with a code sent to their address (or a passkey, or a linked account): the letters say what to check.
    securityNotices: { signInCheck: (locale) => t(locale, 'login.check_email'), ...settings.plugin?.securityNotices },
  });
  const accounts = createAccounts(plugin.store);
  const linkedAccount = linkedAccountLookup(createUpstreamLinks(plugin.store), accounts);
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
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
    findAccount: async (_ctx, sub) => {
      const account = await accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        // An account without an address (passkey or upstream only) has no email claim.
        claims: () => ({ sub, ...(account.email ? { email: account.email, email_verified: true } : {}) }),
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'email', 'offline_access'],
    // The ladder of sign-ins (strength.ts), listed in discovery as acr_values_supported.
    acrValues: [...ACR_VALUES],
    interactions: { policy: referencePolicy(), url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // ID tokens carry the claims of the granted scopes (email with `email`), as
    // most providers' do: sites such as express-openid-connect read the person
    // from the ID token alone (KNOWN-TRAPS 17). UserInfo has them too.
    conformIdTokenClaims: false,
    // The claims parameter: a site may ask for an essential acr (OpenID Connect Core 5.5.1.1; strength.ts).
    features: { devInteractions: { enabled: false }, claimsParameter: { enabled: true } },
    subjectTypes: ['public', 'pairwise'],
    pairwiseIdentifier: async (_ctx, accountId, client) =>
      createHmac('sha256', pairwiseSalt).update(`${client.sectorIdentifier}\0${accountId}`).digest('base64url'),
    ttl: settings.sessionTtlSeconds ? { ...REFERENCE_TTL, Session: settings.sessionTtlSeconds } : REFERENCE_TTL,
    // oidc-provider's errors on pages (an authorization request it cannot
    // send back to the site): the service's sentence for the error, never its
    // description, which may carry text from the request.
    async renderError(ctx: KoaContextWithOIDC, out, error) {
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      const { client, params } = ctx.oidc ?? {};
      const uiLocales = typeof params?.ui_locales === 'string' ? params.ui_locales : undefined;
      sendErrorPage(ctx, {
        serviceName,
        issuer: settings.issuer,
        locale: negotiateLocale({ uiLocales, acceptLanguage: ctx.get('accept-language') }),
        site: client ? { name: client.clientName ?? client.clientId, uri: client.clientUri } : undefined,
      }, { error: out.error }, status);
    },
  });

  const provider = new Provider(settings.issuer, configuration);
  trustProxies(provider, settings.trustProxy);

  const deleteAccount = accountDeletion(plugin.store, plugin);
  const loginCodes = createLoginCodes(plugin.store, secret, settings.loginCodeLimits ?? defaultLoginCodeLimits);
  const operations = createOperations(plugin, { metricsOnPublic: settings.metricsOnPublic, redis: settings.redis });
  provider.use(operations.middleware);
  ways = signInWays({ issuer: settings.issuer, serviceName, upstreams: settings.upstreams ?? [], plugin, accounts, ipLimits: loginCodes.ipLimits, secret });
  ways.mount(provider);
  account = accountRoutes({ provider, accounts, preferences: plugin.preferences, logger, serviceName, secret, recentSignIn: plugin.recentSignIn, deleteAccount });
  provider.use(account.routes.routes());
  const router = interactionRoutes({ provider, accounts, loginCodes, mailer: plugin.mailer, serviceName, secret, logger, passkeys: ways.passkeys, upstreams: ways.upstreams, store: plugin.store, securityNotice: plugin.securityNotice, sharedSignals: plugin.sharedSignals, upstreamHeld: plugin.upstreamSignals.held });
  provider.use(router.routes());
  plugin.attach(provider);

  let server: Server | undefined;
  return {
    provider,
    plugin,
    accounts,
    deleteAccount,
    operations,
    async shutdown(timeoutMs) {
      operations.draining();
      const deadline = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
      // close() stops accepting and ends idle keep-alive connections; it resolves when the requests in flight are answered.
      const requests = server ? new Promise<true>((resolve) => server!.close(() => resolve(true))) : Promise.resolve(true as const);
      const finished = await Promise.race([Promise.all([requests, plugin.stopLetterWorker()]).then(() => true), deadline]);
      server?.closeAllConnections();
      await plugin.close();
      return finished;
    },
    listen(port, host, tls) {
      return new Promise((resolve, reject) => {
        // An https.Server is an http.Server to everything shutdown and close use.
        server = tls ? createTlsServer(tls, provider.callback()) as unknown as Server : createServer(provider.callback());
        server.once('error', reject);
        server.listen(port, host, () => resolve(server!));
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
