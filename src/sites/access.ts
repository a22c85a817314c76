import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import type { Store } from '../store/store.ts';
import type { Organizations } from '../orgs/organizations.ts';
import { randomId } from '../random-pool.ts';
import type { SignalKind } from '../ssf/event-types.ts';
import type { ReasonKey } from '../ssf/signal.ts';
import type { Initiator, TellSites } from '../tell/tell.ts';
import type { ConnectedSites, SiteStatus } from './connected-sites.ts';

export interface AccessDeps {
  sites: ConnectedSites;
  orgs: Organizations;
  adapter: StoreAdapter;
  store: Store;
  logger: Logger;
  /** The site is forgotten in the person's expiring sessions: it was told now (src/sessions/expiry.ts). */
  forgetExpiring?: (accountId: string, clientId: string) => Promise<void>;
  /** Tells the sites (src/tell/): back-channel logout and Shared Signals, once per cause and site. */
  tell: TellSites;
}

/**
 * How an ending is told: its event, reason and initiator, and when the
 * Shared Signals event goes: `always` (the cause happened), `cut` (only to
 * a site where something was left to end: a repeat that heals a half-done
 * one) or `never` (told otherwise).
 */
export interface Ending {
  kind?: SignalKind | undefined;
  reason: ReasonKey;
  initiator: Initiator;
  fields?: Record<string, unknown> | undefined;
  sharedSignals: 'always' | 'cut' | 'never';
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
   * Revokes the account's grants at each site and tells the sites, once
   * (src/tell/). Safe to repeat: once nothing is left to revoke and no
   * session is known, a site gets no logout (a repeated Block site cannot be
   * used to make the service flood a site with logout requests). Told
   * before the site's sessions are forgotten, so a failure leaves them for
   * the repeat. Returns the sites where something ended.
   */
  async function endAccess(accountId: string, clientIds: readonly string[], ending: Ending): Promise<string[]> {
    const found = await Promise.all(clientIds.map(async (clientId) => {
      const [grants, sids] = await Promise.all([adapter.revokeAccountGrants(accountId, clientId), sites.sids(accountId, clientId)]);
      if (grants.length > 0 || sids.length > 0) logger.info('site access revoked', { clientId, grants: grants.length });
      return { clientId, grants, sids, cut: grants.length > 0 || sids.length > 0 };
    }));
    const cut = found.filter((site) => site.cut);
    const told = ending.sharedSignals === 'always' ? found : cut;
    if (told.length === 0) return [];
    // The cause: the sessions it ends, else the grants it revoked (each ends once); nothing ended: this call.
    const ended = cut.flatMap((site) => (site.sids.length > 0 ? site.sids : site.grants)).toSorted();
    await deps.tell({
      accountId, cause: ended.length > 0 ? `access:${ended.join(',')}` : `${ending.reason}:${randomId()}`,
      sites: told.map(({ clientId, sids, cut: ends }) => ({ clientId, sids, logout: ends })),
      kind: ending.kind, reason: ending.reason, initiator: ending.initiator, fields: ending.fields,
      sharedSignals: ending.sharedSignals !== 'never',
    });
    await Promise.all(cut.flatMap(({ clientId }) => [deps.store.del([sites.keys.sids(accountId, clientId)]), deps.forgetExpiring?.(accountId, clientId)]));
    return cut.map((site) => site.clientId);
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
    await endAccess(accountId, [clientId], { kind: 'access_removed', reason: 'access_removed', initiator: 'user', sharedSignals: previous === 'connected' ? 'always' : 'never' });
    return previous === 'connected' ? 'removed' : 'already_removed';
  }

  return {
    endAccess,

    /**
     * Block site (console, Connected sites): the site's access ends now and it
     * receives no tokens for this person until unblocked.
     */
    async blockSite(accountId: string, clientId: string): Promise<BlockResult> {
      const previous: SiteStatus | undefined = await sites.setStatus(accountId, clientId, 'blocked');
      if (previous === undefined) return 'not_connected';
      // Again when already blocked: heals a half-done earlier attempt, sends nothing otherwise.
      await endAccess(accountId, [clientId], { kind: 'site_blocked', reason: 'site_blocked', initiator: 'user', sharedSignals: previous === 'blocked' ? 'never' : 'always' });
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
      const gone: string[] = [];
      for (const clientId of org.clients) if (!(await orgs.mayUse(accountId, clientId))) gone.push(clientId);
      // CAEP token-claims-change: the membership the site's tokens stood on is gone (told once, beside the logouts).
      await endAccess(accountId, gone, {
        kind: 'token_claims_change', reason: 'org_removed', initiator: 'admin', fields: { claims: { org_id: orgId, org_member: false } },
        sharedSignals: result === 'removed' ? 'always' : 'never',
      });
      logger.info('organization member removed', { orgId });
      return result;
    },
  };
}

export type SiteAccess = ReturnType<typeof createSiteAccess>;
