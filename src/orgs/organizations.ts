import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';

/**
 * An organization whose sites only its people may use. Admins and members are
 * oidc-provider account ids; admins are members too and may remove members.
 */
export interface Organization {
  id: string;
  name: string;
  admins: string[];
  members: string[];
  /** Client ids of the organization's sites. */
  clients: string[];
}

export interface Member {
  accountId: string;
  admin: boolean;
  /** ms since the epoch, when an admin removed the member. */
  removedAt?: number;
}

/**
 * Membership: the configured organizations minus the members an admin
 * removed. Removals are persistent (`org:{id}:removed`), so a restart with the
 * same configuration does not let a removed member back in; taking the
 * account out of the configuration and putting it back does not either, by
 * design: {@link Organizations.readmit} does.
 */
export function createOrganizations(store: Store, organizations: readonly Organization[]) {
  let byId = new Map<string, Organization>();
  let byClient = new Map<string, Organization[]>();
  function define(list: readonly Organization[]): void {
    byId = new Map(list.map((org) => [org.id, org]));
    byClient = new Map();
    for (const org of list) {
      for (const clientId of org.clients) byClient.set(clientId, [...(byClient.get(clientId) ?? []), org]);
    }
  }
  define(organizations);
  const removedKey = (orgId: string) => `${store.prefix}org:{${orgId}}:removed`;

  async function isRemoved(orgId: string, accountId: string): Promise<boolean> {
    const [at] = await store.hmget(removedKey(orgId), [accountId]);
    return at != null;
  }

  function listed(org: Organization, accountId: string): boolean {
    return org.admins.includes(accountId) || org.members.includes(accountId);
  }

  return {
    /**
     * Replaces the definitions (e.g. once account ids are known, or when the
     * host's directory changes). Removals recorded earlier still hold.
     */
    define,

    get: (orgId: string) => byId.get(orgId),

    list: (): Organization[] => [...byId.values()],

    /** The organizations a site belongs to (none for most sites: no Redis read then). */
    ofClient: (clientId: string): readonly Organization[] => byClient.get(clientId) ?? [],

    isAdmin(orgId: string, accountId: string): boolean {
      return byId.get(orgId)?.admins.includes(accountId) ?? false;
    },

    /**
     * Whether the person may use the site: always for a site of no
     * organization; otherwise only as a current member of one that owns it.
     */
    async mayUse(accountId: string, clientId: string): Promise<boolean> {
      const orgs = byClient.get(clientId);
      if (!orgs) return true;
      for (const org of orgs) {
        if (listed(org, accountId) && !(await isRemoved(org.id, accountId))) return true;
      }
      return false;
    },

    async members(orgId: string): Promise<Member[]> {
      const org = byId.get(orgId);
      if (!org) return [];
      const removed = await store.hgetall(removedKey(orgId));
      const ids = [...new Set([...org.admins, ...org.members])];
      return ids.map((accountId) => ({
        accountId,
        admin: org.admins.includes(accountId),
        ...(removed[accountId] ? { removedAt: Number(removed[accountId]) } : {}),
      }));
    },

    /**
     * Records the removal of a member. Admins are configured, not removed
     * here. Removing twice keeps the first time.
     */
    async recordRemoval(orgId: string, accountId: string, at = Date.now()): Promise<'removed' | 'already_removed' | 'not_member' | 'admin'> {
      const org = byId.get(orgId);
      if (!org || !listed(org, accountId)) return 'not_member';
      if (org.admins.includes(accountId)) return 'admin';
      const added = await store.run(commands.hsetnx(), [removedKey(orgId)], [accountId, at]);
      return added === 1 ? 'removed' : 'already_removed';
    },

    /** Lets a removed member back in (for hosts; no route offers it). */
    async readmit(orgId: string, accountId: string): Promise<void> {
      await store.run(commands.hdel(), [removedKey(orgId)], [accountId]);
    },
  };
}

export type Organizations = ReturnType<typeof createOrganizations>;
