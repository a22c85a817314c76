import * as commands from '../store/commands.ts';
import { endedKeys } from '../store/ended-keys.ts';
import { EXPIRY_GRACE_MS, expiryKeys } from '../store/expiry-keys.ts';
import type { Store } from '../store/store.ts';

/**
 * `connected`: the site may sign the person in and write to them.
 * `blocked`: Block site was pressed. `access_removed`: Remove access was
 * pressed; the site has no grant and may not write to the person until they
 * sign in there again (and allow it anew).
 */
export type SiteStatus = 'connected' | 'blocked' | 'access_removed';

/** One site a person signed in to, as the console's Connected sites list shows it. */
export interface ConnectedSite {
  clientId: string;
  /** ms since the epoch. */
  firstSignInAt: number;
  lastSignInAt: number;
  /** Scopes of the last sign-in's grant. */
  scopes: string[];
  /** The site may act while the person is not signed in (scope offline_access). */
  offlineAccess: boolean;
  status: SiteStatus;
  /** When Block site was pressed (status `blocked` only). */
  blockedAt?: number;
  /** When Remove access was pressed (status `access_removed` only). */
  accessRemovedAt?: number;
  /** The last time the site used its access (refresh, code exchange, userinfo, introspection), to the minute; absent until it did. */
  lastUsedAt?: number;
  /**
   * When the service ended the site's access (the operator's endSiteAccess
   * or endAccountAccess), if that came after the last sign-in there: the
   * site has no access and may not write to the person until they sign in
   * there again (and allow it anew). Absent otherwise.
   */
  endedByServiceAt?: number;
}

export interface SignInRecord {
  accountId: string;
  clientId: string;
  /** The subject the site sees in its ID tokens (pairwise subjects included). */
  sub: string;
  scopes: string[];
  /** The session's sid for this site, for back-channel logout. */
  sid?: string | undefined;
  /** When the session ends (ms since the epoch). */
  sessionExpiresAt?: number | undefined;
  /** The session's uid: its sites are told when it ends by its lifetime (docs/session-expiry.md). */
  sessionUid?: string | undefined;
  at?: number;
}

/**
 * Key layout (persistent data, no TTL except the sid index); documented in the
 * docs/redis-keys.md ("Redis keys"). Account keys share the account's hash tag.
 */
export function siteKeys(prefix: string) {
  return {
    sites: (accountId: string) => `${prefix}account:{${accountId}}:sites`,
    sids: (accountId: string, clientId: string) => `${prefix}account:{${accountId}}:sids:${clientId}`,
    subjects: (clientId: string) => `${prefix}site:{${clientId}}:subjects`,
  };
}

function parse(clientId: string, json: string): ConnectedSite {
  const raw = JSON.parse(json) as { firstSignInAt: number; lastSignInAt: number; scopes?: string; status: SiteStatus; blockedAt?: number; accessRemovedAt?: number; lastUsedAt?: number };
  const scopes = (raw.scopes ?? '').split(' ').filter(Boolean);
  return {
    clientId,
    firstSignInAt: raw.firstSignInAt,
    lastSignInAt: raw.lastSignInAt,
    scopes,
    offlineAccess: scopes.includes('offline_access'),
    status: raw.status,
    ...(raw.status === 'blocked' && raw.blockedAt !== undefined ? { blockedAt: raw.blockedAt } : {}),
    ...(raw.status === 'access_removed' && raw.accessRemovedAt !== undefined ? { accessRemovedAt: raw.accessRemovedAt } : {}),
    ...(typeof raw.lastUsedAt === 'number' ? { lastUsedAt: raw.lastUsedAt } : {}),
  };
}

/**
 * The sites each person signed in to: written at every completed sign-in,
 * read by the console, by Block site and by /api/notify (which maps a site's
 * `sub` back to the account).
 */
export function createConnectedSites(store: Store) {
  const keys = siteKeys(store.prefix);
  const expiry = expiryKeys(store.prefix);
  const ended = endedKeys(store.prefix);

  /** The service's endings (ms) of each site's access for the person, and of all of theirs. */
  async function endings(accountId: string, clientIds: string[]): Promise<{ person: number; sites: number[] }> {
    const [person, ...sites] = await Promise.all([
      store.hmget(ended.person(accountId), ['grants']),
      ...clientIds.map((clientId) => store.hmget(ended.site(clientId), ['grants'])),
    ]);
    return { person: Number(person![0] ?? 0), sites: sites.map(([at]) => Number(at ?? 0)) };
  }

  /** The site as the person sees it: ended by the service when an ending came at or after the last sign-in. */
  function withEnding(site: ConnectedSite, siteEnded: number, personEnded: number): ConnectedSite {
    const endedAt = Math.max(siteEnded, personEnded);
    return endedAt > 0 && site.lastSignInAt <= endedAt ? { ...site, endedByServiceAt: endedAt } : site;
  }

  return {
    keys,

    /**
     * Writes a completed sign-in (one round trip: two keys in two slots, sent
     * together), with the session's expiry for its sites (on a single node
     * the index of people too; on a Cluster that slot's write follows the
     * person's, so a sweeper never finds the person without the session).
     */
    async recordSignIn(record: SignInRecord): Promise<SiteStatus> {
      const at = record.at ?? Date.now();
      const expiresAt = record.sessionExpiresAt ?? at;
      const expiring = record.sid && record.sessionUid ? record.sessionUid : '';
      const [status] = await Promise.all([
        store.run(
          commands.siteSignIn(),
          [keys.sites(record.accountId), keys.sids(record.accountId, record.clientId), expiry.sessions(record.accountId), ...(store.singleNode ? [expiry.people] : [])],
          [record.clientId, at, record.scopes.join(' '), record.sid ?? '', expiresAt, expiring, record.accountId, EXPIRY_GRACE_MS],
        ).then(async (answer) => {
          if (expiring && !store.singleNode) await store.run(commands.expiryIndex(), [expiry.people], [record.accountId, expiresAt, '', EXPIRY_GRACE_MS]);
          return answer;
        }),
        store.run(commands.hset(), [keys.subjects(record.clientId)], [record.sub, record.accountId]),
      ]);
      return status as SiteStatus;
    },

    async get(accountId: string, clientId: string): Promise<ConnectedSite | undefined> {
      const [[json], { person, sites: [siteEnded] }] = await Promise.all([store.hmget(keys.sites(accountId), [clientId]), endings(accountId, [clientId])]);
      return json == null ? undefined : withEnding(parse(clientId, json), siteEnded!, person);
    },

    /** Every site the person signed in to, most recently used first. */
    async list(accountId: string): Promise<ConnectedSite[]> {
      const all = Object.entries(await store.hgetall(keys.sites(accountId)));
      const { person, sites } = await endings(accountId, all.map(([clientId]) => clientId));
      return all
        .map(([clientId, json], i) => withEnding(parse(clientId, json), sites[i]!, person))
        .sort((a, b) => b.lastSignInAt - a.lastSignInAt || a.clientId.localeCompare(b.clientId));
    },

    /** The account behind a subject the site received, if it ever signed this person in. */
    async accountFor(clientId: string, sub: string): Promise<string | undefined> {
      const [accountId] = await store.hmget(keys.subjects(clientId), [sub]);
      return accountId ?? undefined;
    },

    /**
     * Sets the status (only when it is `onlyFrom`, if given); returns the
     * previous one, or undefined when the person never signed in there.
     */
    async setStatus(accountId: string, clientId: string, status: SiteStatus, at = Date.now(), onlyFrom?: SiteStatus): Promise<SiteStatus | undefined> {
      const previous = await store.run(commands.siteStatus(), [keys.sites(accountId)], [clientId, status, at, onlyFrom ?? '']);
      return (previous ?? undefined) as SiteStatus | undefined;
    },

    /** "Last used": the site used its access at `at` (never creates a record, never goes back in time). */
    async recordUse(accountId: string, clientId: string, at = Date.now()): Promise<void> {
      await store.run(commands.siteUsed(), [keys.sites(accountId)], [clientId, at]);
    },

    /** Live sids of the person's sessions that signed in to the site. */
    async sids(accountId: string, clientId: string): Promise<string[]> {
      const now = Date.now();
      return (await store.zentries(keys.sids(accountId, clientId)))
        .filter(([, expiresAt]) => expiresAt > now)
        .map(([sid]) => sid);
    },
  };
}

export type ConnectedSites = ReturnType<typeof createConnectedSites>;
