import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import type { LetterQueue } from '../notify/letters.ts';
import type { LogoutQueue } from '../notify/logout-queue.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { SsfQueue } from '../ssf/set-queue.ts';
import * as commands from '../store/commands.ts';
import { expiryKeys } from '../store/expiry-keys.ts';
import { globLiteral } from '../store/glob.ts';
import type { Store } from '../store/store.ts';
import type { SiteAccess } from './access.ts';
import type { ConnectedSites } from './connected-sites.ts';

export interface DeleteAccountDeps {
  store: Store;
  adapter: StoreAdapter;
  sites: ConnectedSites;
  sessions: Sessions;
  access: SiteAccess;
  orgs: Organizations;
  letters: LetterQueue;
  ssfQueue: SsfQueue;
  /** The back-channel logout queue (src/notify/logout-queue.ts). */
  logoutQueue: Pick<LogoutQueue, 'dropAccount'>;
  logger: Logger;
  /** The `sub` the person has at the site (pairwise included, as in the ID token); undefined while the provider is not known. */
  subject: (accountId: string, clientId: string) => Promise<string | undefined>;
  /** RISC account-purged: resolves the sites and subjects before it returns (plugin.sharedSignals.accountPurged). */
  accountPurged: (accountId: string) => Promise<void>;
}

/** What deleteAccount did (counts only: nothing that names the person). */
export interface DeleteAccountResult {
  /** Sites the person had (Connected sites, grants or sessions at them). */
  sites: number;
  /** Keys erased: the person's own, and oidc-provider's records of them (sessions, grants, tokens, interactions). */
  keysErased: number;
  /** Letters and Shared Signals jobs about the person taken out of the queues. */
  jobsDropped: number;
}

export { globLiteral };

/** oidc-provider's records (`P<Model>:{id}`, `PSession:uid:{uid}`, `PDeviceCode:userCode:{code}`): hashes with the payload in `p`. */
const MODEL_RECORD = /^[A-Z][A-Za-z]*:(?:uid:|userCode:)?\{[^}]*\}$/;

/** Whether the payload names the account anywhere as `accountId` (a session's, a grant's, a token's, an interaction's result). */
export function namesAccount(value: unknown, accountId: string, depth = 0): boolean {
  if (depth > 6 || value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && (value as { accountId?: unknown }).accountId === accountId) return true;
  return Object.values(value as Record<string, unknown>).some((inner) => namesAccount(inner, accountId, depth + 1));
}

/**
 * Deleting a person (plugin.deleteAccount): the last loss of access. Every
 * step is safe to repeat, and the Connected sites list that tells which
 * sites to visit is erased last, so a run cut short is finished by calling
 * again.
 */
export function createAccountDeletion(deps: DeleteAccountDeps) {
  const { store, adapter, sites, sessions, access, orgs, logger } = deps;
  const prefix = store.prefix;
  const personGlob = (accountId: string) => `account:{${globLiteral(accountId)}}*`;

  /** Every site the person has: Connected sites, and any grant index or session list of a site the list no longer has. */
  async function sitesOf(accountId: string, personKeys: string[]): Promise<string[]> {
    const listed = (await sites.list(accountId)).map((site) => site.clientId);
    const stem = `${prefix}account:{${accountId}}:`;
    const indexed = personKeys
      .filter((key) => key.startsWith(`${stem}grants:`) || key.startsWith(`${stem}sids:`))
      .map((key) => key.slice(key.indexOf(':', stem.length) + 1));
    return [...new Set([...listed, ...indexed])];
  }

  /** The `sub` the person has at each site (pairwise included); the account id where it is not known. */
  async function subjectsOf(accountId: string, clientIds: string[]): Promise<Map<string, string>> {
    const subs = await Promise.all(clientIds.map(async (clientId) => [clientId, (await deps.subject(accountId, clientId)) ?? accountId] as const));
    return new Map(subs);
  }

  /**
   * One pass over the keyspace: the person's own keys, and oidc-provider's
   * records that name them (every session, also past the session list's
   * cap; grants; tokens; interactions), whose payloads are read in batches
   * of 200 sent together, not one round trip per key.
   */
  async function walk(accountId: string): Promise<{ personKeys: string[]; records: string[] }> {
    const personKeys: string[] = [];
    const records: string[] = [];
    const own = `${prefix}account:{${accountId}}`;
    const check = async (keys: string[]) => {
      const payloads = await Promise.all(keys.map((key) => store.hmget(key, ['p']).then(([p]) => p, () => null)));
      keys.forEach((key, i) => {
        try {
          if (payloads[i] && namesAccount(JSON.parse(payloads[i]!), accountId)) records.push(key);
        } catch {
          // Not a record of ours.
        }
      });
    };
    let batch: string[] = [];
    for await (const key of store.scan('*')) {
      if (key.startsWith(own)) personKeys.push(key);
      else if (MODEL_RECORD.test(key.slice(prefix.length))) batch.push(key);
      if (batch.length === 200) {
        await check(batch);
        batch = [];
      }
    }
    await check(batch);
    return { personKeys, records };
  }

  return async function deleteAccount(accountId: string): Promise<DeleteAccountResult> {
    if (typeof accountId !== 'string' || accountId === '') throw new TypeError('oidc-signout-notify: deleteAccount(accountId) needs the account id');
    // Found before anything ends; deleted after (step 3). What a racing sign-in writes meanwhile is dead
    // by the "ended" marks of step 2, and a second call erases it.
    const { personKeys, records } = await walk(accountId);
    const clientIds = await sitesOf(accountId, personKeys);
    const subjects = await subjectsOf(accountId, clientIds);

    // 1. RISC account-purged first: it reads the sites and subjects now, before they go.
    await deps.accountPurged(accountId);
    // 2. Every grant and session ends: each site with a grant or a session gets its back-channel logout
    //    (through the logout queue: tried at once, retried if the site does not answer).
    await access.endAccess(accountId, clientIds, { reason: 'account_purged', initiator: 'admin', sharedSignals: 'never' });
    await adapter.endAccountGrants(accountId);
    await sessions.endAll(accountId);
    // 3. oidc-provider's records that name the person (sessions past the list's cap, grants, tokens, interactions).
    await store.del(records);
    // 4. The site subject maps and the organizations' removal records.
    for (const [clientId, sub] of subjects) {
      const key = sites.keys.subjects(clientId);
      const [owner] = await store.hmget(key, [sub]);
      if (owner === accountId) await store.run(commands.hdel(), [key], [sub]);
    }
    for (const org of orgs.list()) await orgs.readmit(org.id, accountId);
    // 5. Letters, logouts and Shared Signals jobs about the person: letters all; logouts and SETs still
    //    to deliver stay (marked: no outcome recorded, no one told), the finished ones go.
    const jobsDropped = (await deps.letters.dropAccount(accountId))
      + (await deps.logoutQueue.dropAccount(accountId))
      + (await deps.ssfQueue.dropAccount(accountId, [...subjects.values()]));
    // The index of people with sessions due to expire names the person as a member, outside their keys.
    await store.run(commands.zrem(), [expiryKeys(store.prefix).people], [accountId]);
    // 6. Every key of the person, the steps' own writes included (a second, narrower pass), the Connected
    //    sites list last (a second call finds the sites again).
    const left: string[] = [];
    for await (const key of store.scan(personGlob(accountId))) left.push(key);
    const sitesKey = sites.keys.sites(accountId);
    await store.del(left.filter((key) => key !== sitesKey));
    await store.del([sitesKey]);
    logger.warn('a person was deleted: every session and grant ended, every key erased', { sites: clientIds.length });
    return { sites: clientIds.length, keysErased: records.length + left.length, jobsDropped };
  };
}

export type DeleteAccount = ReturnType<typeof createAccountDeletion>;
