import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import { CLIENT_CREDENTIALS_BITS } from '../../adapters/keys.ts';
import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { ContactLookup, Logger } from '../host.ts';
import type { BackchannelLogout } from '../notify/backchannel-logout.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import type { LastUsed } from '../sites/last-used.ts';
import { queuedBackchannelFetch } from './backchannel.ts';
import { logoutSource, postLogoutSuccessSource } from './end-session.ts';
import { consoleGrant } from './console-client.ts';
import { introspectionAllowedPolicy, revocationAllowedPolicy } from './policies.ts';
import { introspectionWithStrength, strengthClaims, strengthTokenClaims } from './sign-in-strength.ts';
import { interactionUrl, siteAccessPolicy } from './site-access-policy.ts';

/** The scopes of a Shared Signals receiver's access token: to change its stream, to read it. */
export const SSF_SCOPES = ['ssf.manage', 'ssf.read'] as const;

type Features = NonNullable<Configuration['features']>;

export interface ConfigureDeps {
  adapter: StoreAdapter;
  logger: Logger;
  allowPrivateFetchHosts: string[];
  serviceName: string;
  contacts: ContactLookup;
  sites: ConnectedSites;
  orgs: Organizations;
  /** "Last used" of Connected sites. */
  lastUsed: LastUsed;
  /** Back-channel logout through the queue (./backchannel.ts). */
  logouts: BackchannelLogout;
  /** Global Token Revocation's scope (upstreamSignals.globalTokenRevocation.scope): like the Shared Signals scopes, only for sites whose `scope` lists it. */
  globalTokenRevocationScope?: string | undefined;
}

type Policy = (...args: never[]) => Promise<boolean> | boolean;

/**
 * The response modes a client may use unless the host's `clientDefaults` say
 * otherwise (RFC 9700 section 2.1.1: no tokens in the front channel, so no
 * fragment); discovery lists these only (./code-flow-discovery.ts).
 */
export const DEFAULT_RESPONSE_MODES = ['query', 'form_post'] as const;

/** The response modes discovery lists for a configuration from configureProvider. */
export function allowedResponseModes(configuration: Configuration): readonly string[] {
  return (configuration.clientDefaults as { response_modes?: string[] } | undefined)?.response_modes ?? DEFAULT_RESPONSE_MODES;
}

/**
 * oidc-provider's back-channel logout request (OpenID Back-Channel Logout
 * 1.0 section 2.5): a POST of a form that holds `logout_token`. Every other
 * outgoing request (a client's jwks_uri, sector_identifier_uri, request_uri,
 * CIBA pings) keeps the provider's guard against special-use addresses.
 */
const isBackchannelLogout = (init: RequestInit) =>
  init.method === 'POST' && init.body instanceof URLSearchParams && init.body.has('logout_token');

type Bits = NonNullable<NonNullable<Configuration['formats']>['bitsOfOpaqueRandomness']>;

/** The host's randomness for every token but client credentials, which get CLIENT_CREDENTIALS_BITS. */
function clientCredentialsBits(host: Bits | undefined): Bits {
  return ((ctx: KoaContextWithOIDC, token: { kind?: string }) => {
    if (token.kind === 'ClientCredentials') return CLIENT_CREDENTIALS_BITS;
    if (typeof host === 'function') return (host as (c: KoaContextWithOIDC, t: unknown) => number)(ctx, token);
    return host ?? 256;
  }) as Bits;
}

/**
 * The scope of a client whose metadata names none: every scope the provider
 * knows (its `scopes` and the scopes its `claims` define, as oidc-provider
 * collects them) but `ssf.manage` and `ssf.read`. Those need the site's
 * `scope` metadata to list them (docs/shared-signals.md).
 */
function scopesButSharedSignals(scopes: readonly string[], claims: NonNullable<Configuration['claims']>, restricted: readonly string[]): string {
  const defined = Object.entries(claims).filter(([, value]) => value !== null && typeof value === 'object').map(([name]) => name);
  return [...new Set([...scopes, ...defined])].filter((scope) => !restricted.includes(scope)).join(' ');
}

/** A host's policy, when it has one, is asked first and can say no; then the plugin's runs. */
function both<P extends Policy>(host: P | undefined, ours: P): P {
  if (!host) return ours;
  return (async (...args: Parameters<P>) => (await host(...args)) && ours(...args)) as unknown as P;
}

/**
 * Merges the plugin's settings into the host's oidc-provider configuration.
 * Everything the host set stays, except the keys listed in the README
 * ("Configuration the plugin sets"), which the plugin owns or wraps.
 */
export function configureProvider<T extends Configuration>(host: T, deps: ConfigureDeps): T {
  const hostFeatures: Features = host.features ?? {};
  const hostIssueRefreshToken = host.issueRefreshToken;
  const hostFindAccount = host.findAccount;
  const hostFetch = host.fetch ?? ((url: URL | string, init: RequestInit) => globalThis.fetch(url, init));
  const pageDeps = { serviceName: deps.serviceName, contacts: deps.contacts };
  const privateHosts = new Set(deps.allowPrivateFetchHosts.map((h) => h.toLowerCase()));

  if (host.adapter) {
    deps.logger.warn('oidc-signout-notify: the host configuration has its own adapter; the plugin replaces it (theft detection and revocation need its atomic store)');
  }

  const restricted = [...SSF_SCOPES, ...(deps.globalTokenRevocationScope ? [deps.globalTokenRevocationScope] : [])];
  const scopes = [...new Set([...(host.scopes ?? ['openid', 'offline_access']), ...restricted])];
  const claims = strengthClaims(host.claims);

  return {
    ...host,
    adapter: deps.adapter.factory,
    // RFC 9700 section 2.1.1, where the host has not chosen: the code flow
    // only (no implicit or hybrid tokens in the front channel), PKCE (S256,
    // the one method oidc-provider 9 has) for every client, confidential too.
    responseTypes: host.responseTypes ?? ['code'],
    clientDefaults: {
      ...host.clientDefaults,
      response_modes: (host.clientDefaults as { response_modes?: string[] } | undefined)?.response_modes ?? [...DEFAULT_RESPONSE_MODES],
      // oidc-provider lets a client without `scope` metadata ask for any scope: the Shared Signals ones go only to sites that list them.
      scope: (host.clientDefaults as { scope?: string } | undefined)?.scope ?? scopesButSharedSignals(scopes, claims, restricted),
    },
    pkce: { ...host.pkce, required: host.pkce?.required ?? (() => true) },
    // Every refresh rotates (confidential clients too), so a stolen refresh
    // token used after the legitimate one, or beside it, is detected.
    rotateRefreshToken: true,
    // oidc-provider hands fetch a dispatcher that refuses special-use
    // addresses. Back-channel logout to a listed host goes without it (sites
    // on loopback or a private network), and never follows a redirect.
    fetch(url: URL | string, init: RequestInit & { dispatcher?: unknown }) {
      if (!isBackchannelLogout(init)) return hostFetch(url as URL, init);
      if (privateHosts.size && privateHosts.has(new URL(url).hostname.toLowerCase())) {
        delete init.dispatcher;
        init.redirect = 'manual';
      }
      // oidc-provider's own end_session: each logout goes through the queue (./backchannel.ts).
      return queuedBackchannelFetch(deps.logouts, init, () => hostFetch(url as URL, init));
    },
    // A client allowed the refresh_token grant always gets one; without
    // offline_access it is bound to the service session and dies with it.
    async issueRefreshToken(ctx: KoaContextWithOIDC, client, code) {
      if (!client.grantTypeAllowed('refresh_token')) return false;
      if (hostIssueRefreshToken) return hostIssueRefreshToken(ctx, client, code);
      return true;
    },
    // A token is only as good as the person's membership: a token of a removed
    // organization member that escaped the revocation fails at refresh, code
    // exchange and userinfo, because the account is "not found" for it.
    async findAccount(ctx: KoaContextWithOIDC, sub: string, token?: { clientId?: string }) {
      // A refresh, code exchange or userinfo: the site uses its access (at the
      // token endpoint the write leaves with the endpoint's own writes).
      if (token?.clientId) deps.lastUsed.record(sub, token.clientId, ctx);
      // Without the host's, oidc-provider's development default: every sub exists.
      const account = hostFindAccount ? await hostFindAccount(ctx, sub, token as never) : { accountId: sub, claims: () => ({ sub }) };
      if (account && token?.clientId && !(await deps.orgs.mayUse(sub, token.clientId))) return undefined;
      return account;
    },
    // The sign-in behind each token (acr, amr, auth_time) in ID tokens and
    // introspection: ./sign-in-strength.ts.
    claims,
    extraTokenClaims: strengthTokenClaims(host.extraTokenClaims),
    loadExistingGrant: consoleGrant(host.loadExistingGrant),
    interactions: {
      ...host.interactions,
      policy: siteAccessPolicy(host.interactions?.policy, { sites: deps.sites, orgs: deps.orgs }),
      url: interactionUrl(host.interactions?.url),
    },
    // Client-credentials tokens are 288 bits long, so that the adapter tells them from others by their length
    // (adapters/keys.ts: introspection and revocation send no extra command for them).
    formats: {
      ...host.formats,
      bitsOfOpaqueRandomness: clientCredentialsBits(host.formats?.bitsOfOpaqueRandomness),
    },
    // Shared Signals receivers get their access tokens by client credentials, with these scopes (src/api/ssf/).
    scopes,
    features: {
      ...hostFeatures,
      clientCredentials: { ...hostFeatures.clientCredentials, enabled: true },
      revocation: {
        ...hostFeatures.revocation,
        enabled: true,
        allowedPolicy: both(hostFeatures.revocation?.allowedPolicy, revocationAllowedPolicy),
      },
      introspection: {
        ...hostFeatures.introspection,
        enabled: true,
        allowedPolicy: introspectionWithStrength(both(hostFeatures.introspection?.allowedPolicy, introspectionAllowedPolicy(deps.orgs, deps.lastUsed))),
      },
      rpInitiatedLogout: {
        ...hostFeatures.rpInitiatedLogout,
        enabled: true,
        logoutSource: logoutSource(pageDeps),
        postLogoutSuccessSource: postLogoutSuccessSource({ ...pageDeps, logouts: deps.logouts }),
      },
      backchannelLogout: { ...hostFeatures.backchannelLogout, enabled: true },
    },
  } as T;
}
