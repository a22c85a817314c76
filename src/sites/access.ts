import type Provider from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../options.ts';
import type { Store } from '../store/store.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites, SiteStatus } from './connected-sites.ts';

export interface AccessDeps {
  sites: ConnectedSites;
  orgs: Organizations;
  adapter: StoreAdapter;
  store: Store;
  logger: Logger;
  /** The provider, once the plugin is attached (back-channel logout needs its keys). */
  provider: () => Provider | undefined;
}

export type BlockResult = 'blocked' | 'already_blocked' | 'not_connected';
export type UnblockResult = 'connected' | 'already_connected' | 'not_connected';
export type RemoveMemberResult = 'removed' | 'already_removed' | 'not_member' | 'admin';

/**
 * The ways a site loses a person's access (spec, "States and transitions"):
 * Block site and removal from an organization. Both revoke every grant of the
 * account at the site (its tokens die with it; a write racing the revocation
 * is refused by the grant's tombstone) and send back-channel logout.
 */
export function createSiteAccess(deps: AccessDeps) {
  const { sites, orgs, adapter, logger } = deps;

  /** Sends the site a logout token for each of the person's sessions there (OpenID Back-Channel Logout 1.0). */
  async function backchannelLogout(accountId: string, clientId: string): Promise<void> {
    const provider = deps.provider();
    if (!provider) return;
    const client = await provider.Client.find(clientId).catch(() => undefined);
    if (!client?.backchannelLogoutUri) return;
    const sids = await sites.sids(accountId, clientId);
    // Without session-required the token carries sub only: one covers every session.
    const targets: (string | undefined)[] = client.backchannelLogoutSessionRequired && sids.length > 0 ? sids : [sids[0]];
    // Client#backchannelLogout signs the logout token with the provider's keys (pairwise sub included).
    const send = (client as unknown as { backchannelLogout(sub: string, sid?: string): Promise<void> }).backchannelLogout.bind(client);
    await Promise.all(targets.map((sid) => send(accountId, sid).then(
      () => logger.info('back-channel logout delivered', { clientId }),
      (err: Error) => logger.warn('back-channel logout failed', { clientId, reason: err.message }),
    )));
  }

  /** Revokes the account's grants at the site and tells the site. */
  async function cutAccess(accountId: string, clientId: string): Promise<void> {
    const grants = await adapter.revokeAccountGrants(accountId, clientId);
    logger.info('site access revoked', { clientId, grants: grants.length });
    await backchannelLogout(accountId, clientId);
    await deps.store.del([sites.keys.sids(accountId, clientId)]);
  }

  return {
    cutAccess,

    /**
     * Block site (console, Connected sites): the site's access ends now and it
     * receives no tokens for this person until unblocked.
     */
    async blockSite(accountId: string, clientId: string): Promise<BlockResult> {
      const previous: SiteStatus | undefined = await sites.setStatus(accountId, clientId, 'blocked');
      if (previous === undefined) return 'not_connected';
      // Revoke again even when already blocked: cheap, and heals a half-done earlier attempt.
      await cutAccess(accountId, clientId);
      return previous === 'blocked' ? 'already_blocked' : 'blocked';
    },

    /** Lets the site sign the person in again; it gets no old grant back. */
    async unblockSite(accountId: string, clientId: string): Promise<UnblockResult> {
      const previous = await sites.setStatus(accountId, clientId, 'connected');
      if (previous === undefined) return 'not_connected';
      return previous === 'connected' ? 'already_connected' : 'connected';
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
      for (const clientId of org.clients) {
        if (!(await orgs.mayUse(accountId, clientId))) await cutAccess(accountId, clientId);
      }
      logger.info('organization member removed', { orgId });
      return result;
    },
  };
}

export type SiteAccess = ReturnType<typeof createSiteAccess>;
