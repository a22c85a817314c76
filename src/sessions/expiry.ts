import type Provider from 'oidc-provider';

import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { Logger } from '../host.ts';
import { sessionByUid } from '../provider-types.ts';
import * as commands from '../store/commands.ts';
import { EXPIRY_GRACE_MS, expiryKeys } from '../store/expiry-keys.ts';
import type { Store } from '../store/store.ts';
import type { TellSites } from '../tell/tell.ts';

/** How long a sweeper holds what it claimed: one that dies leaves it to another after this. */
const LEASE_MS = 5 * 60_000;
/** People claimed by one sweep (the next sweep takes the rest). */
const PEOPLE_PER_SWEEP = 200;

/** One expiring session as the sign-in recorded it (lua/site_signin.lua). */
interface ExpiringSession {
  exp: number;
  /** clientId -> the session's sid there. */
  sites: Record<string, string>;
}

export interface SessionExpiryDeps {
  store: Store;
  logger: Logger;
  /** The provider (attached, or the worker's): a session's current expiry is read through it. */
  provider: () => Provider | undefined;
  /** Tells the sites (src/tell/): the cause names the session, so a repeated sweep queues nothing twice. */
  tell: TellSites;
}

/**
 * Service sessions that end by their lifetime (docs/session-expiry.md).
 * Nothing runs when a Redis key expires, so each site sign-in records the
 * session's expiry and its sites (lua/site_signin.lua), and a sweeper claims
 * the due ones, checks that each really ended (activity may have kept it
 * alive: then it is put back with its later expiry), and tells its sites as
 * a sign-out does: CAEP session-revoked (reason expired) and back-channel
 * logout. A sign-out forgets what it told already.
 */
export function createSessionExpiry(deps: SessionExpiryDeps) {
  const { store, logger } = deps;
  const keys = expiryKeys(store.prefix);

  /** The session's expiry if it is still alive (ms), else undefined. */
  async function aliveUntil(accountId: string, uid: string): Promise<number | undefined> {
    const provider = deps.provider();
    if (!provider) throw new Error('the provider is not known yet');
    const session = await sessionByUid(provider, uid);
    if (!session || session.accountId !== accountId || typeof session.exp !== 'number') return undefined;
    const until = session.exp * 1000;
    return until > Date.now() ? until : undefined;
  }

  async function tell(accountId: string, uid: string, session: ExpiringSession): Promise<number> {
    const clientIds = Object.keys(session.sites).filter((clientId) => clientId !== CONSOLE_CLIENT_ID).sort();
    if (clientIds.length === 0) return 0;
    await deps.tell({
      accountId, cause: `expired:${uid}`, reason: 'expired', initiator: 'policy', at: session.exp,
      sites: clientIds.map((clientId) => ({ clientId, sids: [session.sites[clientId]!] })),
    });
    logger.info('service session expired: its sites were told', { sites: clientIds.length });
    return clientIds.length;
  }

  /** One person's due sessions: each told (or put back), then the person's next due time in the index. */
  async function sweepPerson(accountId: string, claimed: string, now: number): Promise<number> {
    const [next, ...taken] = await store.run(commands.expiryTake(), [keys.sessions(accountId)], [now, LEASE_MS]) as string[];
    let nextDue = next ?? '';
    let told = 0;
    for (let i = 0; i + 1 < taken.length; i += 2) {
      const uid = taken[i]!;
      const later = await aliveUntil(accountId, uid);
      if (later === undefined) told += await tell(accountId, uid, JSON.parse(taken[i + 1]!) as ExpiringSession);
      nextDue = await store.run(commands.expirySettle(), [keys.sessions(accountId)], [uid, later ?? '', EXPIRY_GRACE_MS]) as string;
    }
    await store.run(commands.expiryIndex(), [keys.people], [accountId, nextDue, claimed, EXPIRY_GRACE_MS]);
    return told;
  }

  return {
    keys,

    /**
     * One sweep: claims the people with a due session (once, however many
     * sweepers run), and tells the sites of each session that ended.
     * Returns how many sites were told.
     */
    async sweep(now = Date.now()): Promise<number> {
      const [claimed, ...people] = await store.run(commands.expiryClaim(), [keys.people], [now, LEASE_MS, PEOPLE_PER_SWEEP]) as string[];
      if (!claimed) return 0;
      let told = 0;
      for (const accountId of people) {
        try {
          told += await sweepPerson(accountId, claimed, now);
        } catch (err) {
          // Left leased: the next sweep after the lease takes it up again.
          logger.warn('expired sessions not swept', { reason: (err as Error).message });
        }
      }
      return told;
    },

    /**
     * A sign-out told the sites already: forgets the session (`uid`), or one
     * site of it (`clientId`), or that site in every session (`clientId`
     * alone), or every session but `keep` (nothing given).
     */
    async forget(accountId: string, what: { uid?: string | undefined; clientId?: string | undefined; keep?: string | undefined } = {}): Promise<void> {
      await store.run(commands.expiryForget(), [keys.sessions(accountId)], [what.uid ?? '', what.clientId ?? '', what.keep ?? '']);
    },
  };
}

export type SessionExpiry = ReturnType<typeof createSessionExpiry>;
