import type Provider from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { Logger } from '../host.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { randomId } from '../random-pool.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { describeDevice, type Device } from './device.ts';
import type { SessionExpiry } from './expiry.ts';
import { sessionByUid, type ServiceSessionRecord } from '../provider-types.ts';
import type { TellSites } from '../tell/tell.ts';

/** Sessions a person's list keeps; past it, the least recently active are forgotten (they still work). */
const MAX_SESSIONS = 100;
/** A User-Agent longer than this is cut: it only names a browser. */
const MAX_USER_AGENT = 512;

/** Key layout; documented in docs/redis-keys.md ("Redis keys"). */
export function sessionKeys(prefix: string) {
  return {
    /** Hash: session uid -> JSON { firstSeenAt, lastSeenAt, expiresAt, userAgent, upstream? }; expires with the last session. */
    sessions: (accountId: string) => `${prefix}account:{${accountId}}:sessions`,
  };
}

/** One service session of the person, as the console lists it. */
export interface ServiceSession extends Device {
  /** The session's uid: names it without being its cookie. */
  id: string;
  /** ms since the epoch. */
  firstSeenAt: number;
  lastSeenAt: number;
  expiresAt: number;
  /** Sites signed in through this session (the console itself left out). */
  clientIds: string[];
}

interface SessionRecord {
  firstSeenAt: number;
  lastSeenAt: number;
  expiresAt: number;
  userAgent?: string;
  /** The upstream the session's latest sign-in went through (the host's interaction result `login.upstream`). */
  upstream?: string;
}

export interface SessionsDeps {
  /**
   * Tells the person their other sessions ended (a security notice; the
   * plugin's): from which browser, described, and that browser's id, which
   * holds back a repeat from the same browser within the day.
   */
  toldEnded?: (accountId: string, browser: string | undefined, browserId: string) => Promise<unknown>;
  store: Store;
  adapter: StoreAdapter;
  sites: ConnectedSites;
  logger: Logger;
  provider: () => Provider | undefined;
  /** Tells the sites (src/tell/): back-channel logout and Shared Signals, once per cause and site. */
  tell: TellSites;
  /** Sessions that end by their lifetime: a session ended here is forgotten there (told once). */
  expiry?: SessionExpiry | undefined;
}

/**
 * The person's service sessions (Keycloak's Device activity, Google's
 * devices): recorded when a sign-in goes through one, listed from
 * oidc-provider's own session records (a session that ended is dropped from
 * the list when it is next read), and ended from the console as
 * /session/end ends one.
 */
export function createSessions(deps: SessionsDeps) {
  const keys = sessionKeys(deps.store.prefix);

  function provider(): Provider {
    const found = deps.provider();
    if (!found) throw new Error('the plugin is not attached to a provider');
    return found;
  }

  /** The session by its uid, if it is still the person's. */
  async function find(accountId: string, uid: string): Promise<ServiceSessionRecord | undefined> {
    const session = await sessionByUid(provider(), uid);
    return session?.accountId === accountId ? session : undefined;
  }

  const api = {
    keys,

    /**
     * A sign-in went through the session now (awaited by the caller; a few
     * per minute at most). `upstream`: a new sign-in, through that upstream
     * (its id) or not (null); undefined keeps what was recorded.
     */
    async seen(accountId: string, uid: string, expiresAt: number, userAgent: string | undefined, at = Date.now(), upstream?: string | null): Promise<void> {
      const way = upstream === undefined ? '' : upstream === null ? '-' : `=${upstream}`;
      await deps.store.run(commands.sessionSeen(), [keys.sessions(accountId)], [uid, at, (userAgent ?? '').slice(0, MAX_USER_AGENT), expiresAt, MAX_SESSIONS, way]);
    },

    /**
     * Ends the person's service sessions whose latest sign-in went through
     * the upstream (its session-revoked), each as the console ends one: its
     * sites get back-channel logout and Shared Signals. How many ended.
     */
    async endThrough(accountId: string, upstream: string): Promise<number> {
      const recorded = Object.entries(await deps.store.hgetall(keys.sessions(accountId)))
        .filter(([, json]) => (JSON.parse(json) as SessionRecord).upstream === upstream);
      const ended = await Promise.all(recorded.map(([uid]) => api.end(accountId, uid, 'upstream')));
      return ended.filter(Boolean).length;
    },

    /** Every live session of the person, most recently active first. */
    async list(accountId: string): Promise<ServiceSession[]> {
      const recorded = Object.entries(await deps.store.hgetall(keys.sessions(accountId)));
      const sessions = await Promise.all(recorded.map(([uid]) => find(accountId, uid)));
      const gone = recorded.filter((_entry, i) => !sessions[i]).map(([uid]) => uid);
      if (gone.length > 0) await deps.store.run(commands.hdel(), [keys.sessions(accountId)], gone);
      const now = Date.now();
      return recorded.flatMap(([uid, json], i) => {
        const session = sessions[i];
        if (!session) return [];
        const record = JSON.parse(json) as SessionRecord;
        const expiresAt = typeof session.exp === 'number' ? session.exp * 1000 : record.expiresAt;
        if (expiresAt <= now) return [];
        return [{
          id: uid,
          ...describeDevice(record.userAgent),
          firstSeenAt: record.firstSeenAt,
          lastSeenAt: record.lastSeenAt,
          expiresAt,
          clientIds: Object.keys(session.authorizations ?? {}).filter((clientId) => clientId !== CONSOLE_CLIENT_ID),
        }];
      }).sort((a, b) => b.lastSeenAt - a.lastSeenAt);
    },

    /**
     * Ends every service session of the person, however many (the list
     * shown is capped; the ending is not: a mark ends every session signed
     * in up to now, and the tokens bound to them), but the one named `keep`.
     * Each site the ended sessions signed in to gets back-channel logout.
     * Returns how many of the sessions the console listed ended. `from`: the
     * person's own "sign out everywhere", from that browser (its User-Agent,
     * and its id when its cookie is the plugin's, signed).
     */
    async endAll(accountId: string, keep?: string, from?: { userAgent: string; browserId?: string | undefined }): Promise<number> {
      const listed = Object.keys(await deps.store.hgetall(keys.sessions(accountId))).filter((uid) => uid !== keep);
      const kept = keep ? await find(accountId, keep) : undefined;
      await deps.adapter.endAccountSessions(accountId, kept?.uid ?? '');
      await deps.expiry?.forget(accountId, { keep: kept?.uid });
      if (listed.length > 0) await deps.store.run(commands.hdel(), [keys.sessions(accountId)], listed);
      // The kept session's own sign-ins at sites stay.
      const keptSids = new Set(Object.values(kept?.authorizations ?? {}).map((a) => a.sid).filter((sid): sid is string => sid !== undefined));
      const sites = await deps.sites.list(accountId);
      const ended = (await Promise.all(sites.map(async ({ clientId }) => ({
        clientId, sids: (await deps.sites.sids(accountId, clientId)).filter((sid) => !keptSids.has(sid)),
      })))).filter(({ sids }) => sids.length > 0);
      // The person's "sign out everywhere" (from a browser), or the service's endAccountAccess.
      const byPerson = from !== undefined;
      // Told before the sessions are forgotten at the sites, so a failure leaves them for the repeat.
      await deps.tell({
        accountId, sites: ended, cause: `sessions:${ended.flatMap(({ sids }) => sids).toSorted().join(',')}`,
        reason: byPerson ? 'sign_out_everywhere' : 'service', initiator: byPerson ? 'user' : 'admin',
      });
      await Promise.all(ended.map(({ clientId, sids }) => deps.store.run(commands.zrem(), [deps.sites.keys.sids(accountId, clientId)], sids)));
      deps.logger.info(keep ? 'the person\'s other service sessions ended' : 'every service session of the person ended', { listed: listed.length });
      if (from) {
        const { browser, os } = describeDevice(from.userAgent);
        // A browser without the plugin's signed id is told every time: it cannot hold back another's.
        await deps.toldEnded?.(accountId, [browser, os].filter(Boolean).join(', ') || undefined, from.browserId ?? randomId());
      }
      return listed.length;
    },

    /**
     * Ends one of the person's sessions as /session/end does for it: the
     * grants of its sites that lack offline_access are revoked, the session
     * is destroyed, and each of its sites gets back-channel logout. False
     * when there is no such session (any more).
     */
    async end(accountId: string, uid: string, by: 'person' | 'upstream' = 'person'): Promise<boolean> {
      const session = await find(accountId, uid);
      if (!session) return false;
      const authorizations = Object.entries(session.authorizations ?? {});
      await Promise.all(authorizations.map(([, a]) => (a.grantId && !a.persistsLogout ? deps.adapter.revokeGrant(a.grantId) : undefined)));
      await session.destroy();
      await Promise.all([
        deps.expiry?.forget(accountId, { uid }),
        deps.store.run(commands.hdel(), [keys.sessions(accountId)], [uid]),
        ...authorizations.flatMap(([clientId, a]) => (a.sid ? [deps.store.run(commands.zrem(), [deps.sites.keys.sids(accountId, clientId)], [a.sid])] : [])),
      ]);
      deps.logger.info(by === 'person' ? 'service session ended from the console' : 'service session ended: its upstream signed the person out', { sites: authorizations.length });
      await deps.tell({
        accountId, cause: `session:${uid}`,
        ...(by === 'person' ? { reason: 'sign_out', initiator: 'user' } as const : { reason: 'service', initiator: 'policy' } as const),
        sites: authorizations.filter(([clientId]) => clientId !== CONSOLE_CLIENT_ID).map(([clientId, a]) => ({ clientId, sids: a.sid ? [a.sid] : [] })),
      });
      return true;
    },
  };
  return api;
}

export type Sessions = ReturnType<typeof createSessions>;
