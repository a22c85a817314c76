import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { ContactLookup, Logger } from '../options.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { logoutSource, postLogoutSuccessSource } from './end-session.ts';
import { consoleGrant } from '../console/console-client.ts';
import { introspectionAllowedPolicy, revocationAllowedPolicy } from './policies.ts';
import { interactionUrl, siteAccessPolicy } from './site-access-policy.ts';

type Features = NonNullable<Configuration['features']>;

export interface ConfigureDeps {
  adapter: StoreAdapter;
  logger: Logger;
  allowPrivateFetchHosts: string[];
  serviceName: string;
  contacts: ContactLookup;
  sites: ConnectedSites;
  orgs: Organizations;
}

type Policy = (...args: never[]) => Promise<boolean> | boolean;

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
  const pageDeps = { serviceName: deps.serviceName, contacts: deps.contacts, pairwiseIdentifier: host.pairwiseIdentifier };
  const privateHosts = new Set(deps.allowPrivateFetchHosts.map((h) => h.toLowerCase()));

  if (host.adapter) {
    deps.logger.warn('oidc-signout-notify: the host configuration has its own adapter; the plugin replaces it (theft detection and revocation need its atomic store)');
  }

  return {
    ...host,
    adapter: deps.adapter.factory,
    // Every refresh rotates (confidential clients too), so a stolen refresh
    // token used after the legitimate one, or beside it, is detected.
    rotateRefreshToken: true,
    // oidc-provider hands fetch a dispatcher that refuses special-use
    // addresses; listed hosts go without it (back-channel logout to local sites).
    fetch(url: URL | string, init: RequestInit & { dispatcher?: unknown }) {
      if (privateHosts.size && privateHosts.has(new URL(url).hostname.toLowerCase())) {
        delete init.dispatcher;
      }
      return hostFetch(url as URL, init);
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
      // Without the host's, oidc-provider's development default: every sub exists.
      const account = hostFindAccount ? await hostFindAccount(ctx, sub, token as never) : { accountId: sub, claims: () => ({ sub }) };
      if (account && token?.clientId && !(await deps.orgs.mayUse(sub, token.clientId))) return undefined;
      return account;
    },
    loadExistingGrant: consoleGrant(host.loadExistingGrant),
    interactions: {
      ...host.interactions,
      policy: siteAccessPolicy(host.interactions?.policy, { sites: deps.sites, orgs: deps.orgs }),
      url: interactionUrl(host.interactions?.url),
    },
    features: {
      ...hostFeatures,
      revocation: {
        ...hostFeatures.revocation,
        enabled: true,
        allowedPolicy: both(hostFeatures.revocation?.allowedPolicy, revocationAllowedPolicy),
      },
      introspection: {
        ...hostFeatures.introspection,
        enabled: true,
        allowedPolicy: both(hostFeatures.introspection?.allowedPolicy, introspectionAllowedPolicy(deps.orgs)),
      },
      rpInitiatedLogout: {
        ...hostFeatures.rpInitiatedLogout,
        enabled: true,
        logoutSource: logoutSource(pageDeps),
        postLogoutSuccessSource: postLogoutSuccessSource(pageDeps),
      },
      backchannelLogout: { ...hostFeatures.backchannelLogout, enabled: true },
    },
  } as T;
}
