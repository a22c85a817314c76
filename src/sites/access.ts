import type Provider from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import type { Store } from '../store/store.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites, SiteStatus } from './connected-sites.ts';
import type { Signaller } from '../ssf/transmitter.ts';

export interface AccessDeps {
  sites: ConnectedSites;
  orgs: Organizations;
  adapter: StoreAdapter;
  store: Store;
  logger: Logger;
  /** The site is forgotten in the person's expiring sessions: it was told now (src/sessions/expiry.ts). */
  forgetExpiring?: (accountId: string, clientId: string) => Promise<void>;
  /** The provider, once the plugin is attached. */
  provider: () => Provider | undefined;
  /** Tells the sites through Shared Signals (src/ssf/): one queued job per cause. */
  signal?: Signaller | undefined;
  /** Back-channel logout, retried from a queue (src/notify/backchannel-logout.ts). */
  logouts: { queueLogout(accountId: string, clientId: string, sids: string[], cause: string): Promise<void> };
}

export type BlockResult = 'blocked' | 'already_blocked' | 'not_connected';
export type UnblockResult = 'connected' | 'already_connected' | 'not_connected';
/** `blocked`: a blocked site has no access to remove; Block keeps its meaning until Unblock. */
export type RemoveAccessResult = 'removed' | 'already_removed' | 'blocked' | 'not_connected';
export type RemoveMemberResult = 'removed' | 'already_removed' | 'not_member' | 'admin';

/**
 * The ways a site loses a person's access (spec, "States and transitions"):
 * Block site, Remove access and removal from an organization. Each revokes
 * every grant of the account at the site (its tokens die with it; a write
 * racing the revocation is refused by the grant's tombstone) and sends
 * back-channel logout.
 */
export function createSiteAccess(deps: AccessDeps) {
  const { sites, orgs, adapter, logger } = deps;

  /**
   * Tells the site its access ended (OpenID Back-Channel Logout 1.0) through
   * the logout queue: tried at once, retried when the site does not answer,
   * shown to the person. `cause` names the event (a repeated trigger of one
   * cause sends nothing twice).
   */
  async function backchannelLogout(accountId: string, clientId: string, sids: string[], cause: string): Promise<void> {
    await deps.logouts.queueLogout(accountId, clientId, sids, cause);
  }

  /**
   * Revokes the account's grants at the site and tells the site. Safe to
   * repeat: once nothing is left to revoke and no session is known, it
   * changes nothing and sends nothing (a repeated Block site cannot be used
   * to make the service flood a site with logout requests).
   */
  async function cutAccess(accountId: string, clientId: string): Promise<void> {
    const [grants, sids] = await Promise.all([adapter.revokeAccountGrants(accountId, clientId), sites.sids(accountId, clientId)]);
    if (grants.length === 0 && sids.length === 0) return;
    logger.info('site access revoked', { clientId, grants: grants.length });
    // The cause: the sessions it ends there, else the grants it revoked (each ends once).
    await backchannelLogout(accountId, clientId, sids, `access:${(sids.length > 0 ? sids : grants).toSorted().join(',')}`);
    await Promise.all([deps.store.del([sites.keys.sids(accountId, clientId)]), deps.forgetExpiring?.(accountId, clientId)]);
  }

  /**
   * Remove access (console, Connected sites): the site's access ends now,
   * as with Block site, but the site is not blocked: the next sign-in there
   * asks for the person's consent again (nothing it had comes back), and
   * until then it may not write to them (`not_connected`).
   */
  async function removeAccess(accountId: string, clientId: string): Promise<RemoveAccessResult> {
    const previous = await sites.setStatus(accountId, clientId, 'access_removed', Date.now(), 'connected');
    if (previous === undefined) return 'not_connected';
    if (previous === 'blocked') return 'blocked';
    // Again when already removed: heals a half-done earlier attempt, sends nothing otherwise.
    await cutAccess(accountId, clientId);
    if (previous === 'connected') await deps.signal?.({ kind: 'access_removed', accountId, clientIds: [clientId], reason: 'access_removed', fields: { initiating_entity: 'user' } });
    return previous === 'connected' ? 'removed' : 'already_removed';
  }

  return {
    cutAccess,
    backchannelLogout,

    /**
     * Block site (console, Connected sites): the site's access ends now and it
     * receives no tokens for this person until unblocked.
     */
    async blockSite(accountId: string, clientId: string): Promise<BlockResult> {
      const previous: SiteStatus | undefined = await sites.setStatus(accountId, clientId, 'blocked');
      if (previous === undefined) return 'not_connected';
      // Again when already blocked: heals a half-done earlier attempt, sends nothing otherwise.
      await cutAccess(accountId, clientId);
      if (previous !== 'blocked') await deps.signal?.({ kind: 'site_blocked', accountId, clientIds: [clientId], reason: 'site_blocked', fields: { initiating_entity: 'user' } });
      return previous === 'blocked' ? 'already_blocked' : 'blocked';
    },

    /** Lets the site sign the person in again; it gets no old grant back. */
    async unblockSite(accountId: string, clientId: string): Promise<UnblockResult> {
      const previous = await sites.setStatus(accountId, clientId, 'connected', Date.now(), 'blocked');
      if (previous === undefined) return 'not_connected';
      return previous === 'blocked' ? 'connected' : 'already_connected';
    },

    removeAccess,

    /** Remove access from every site the person is connected to (one confirmation in the console); returns the sites whose access ended. */
    async removeAllAccess(accountId: string): Promise<string[]> {
      // Every listed site: removeAccess itself leaves a blocked one alone and heals a half-done removal.
      const results = await Promise.all((await sites.list(accountId)).map(async (site) => [site.clientId, await removeAccess(accountId, site.clientId)] as const));
      return results.filter(([, result]) => result === 'removed').map(([clientId]) => clientId);
    },

    /**
     * An organization admin removes a member: every grant of the member at the
     * organization's sites is revoked, unless another organization owning the
     * same site still counts them as a member.
     */
    async removeMember(orgId: string, accountId: string): Promise<RemoveMemberResult> {
      const result = await orgs.recordRemoval(orgId, accountId);
      if (result !== 'removed' && result !== 'already_removed') return result;
      const org = orgs.get(orgId)!;
      const cut: string[] = [];
      for (const clientId of org.clients) {
        if (!(await orgs.mayUse(accountId, clientId))) {
          await cutAccess(accountId, clientId);
          cut.push(clientId);
        }
      }
      // CAEP token-claims-change: the membership the site's tokens stood on is gone (one txn for all its sites).
      if (result === 'removed' && cut.length > 0) {
        await deps.signal?.({ kind: 'token_claims_change', accountId, clientIds: cut, reason: 'org_removed', fields: { initiating_entity: 'admin', claims: { org_id: orgId, org_member: false } } });
      }
      logger.info('organization member removed', { orgId });
      return result;
    },
  };
}

export type SiteAccess = ReturnType<typeof createSiteAccess>;
