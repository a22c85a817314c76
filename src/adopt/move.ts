import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { CREDENTIALS, GRANTABLE, withoutId, type AdapterKeys } from '../../adapters/keys.ts';
import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { Logger } from '../host.ts';
import { sessionKeys } from '../sessions/sessions.ts';
import { siteKeys } from '../sites/connected-sites.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { UnreadableRecordError } from './bounded.ts';
import type { AdoptKeys } from './keys.ts';
import { found } from './previous.ts';
import type { Removals } from './removals.ts';
import { adoptClaim, adoptSite } from './scripts.ts';

/** What became of one record of the previous store (the import counts them). */
export type MoveOutcome = 'moved' | 'moved_before' | 'here' | 'expired' | 'refused';

/** The sessions list's cap (src/sessions/sessions.ts). */
const MAX_SESSIONS = 100;

export interface MoveDeps {
  store: Store;
  keys: AdapterKeys;
  adopt: AdoptKeys;
  previous: (model: string) => Adapter;
  lifetimes: { clockTolerance: number; defaultTtl: number };
  /** The plugin's own revocation of a grant (tombstone, its records taken). */
  revokeGrant: (grantId: string) => Promise<void>;
  /** The `sub` the person has at the site (pairwise included), when the provider (`via`, else the plugin's) knows the site. */
  subject: (accountId: string, clientId: string, via?: Provider) => Promise<string | undefined>;
  removals: Removals;
  graceMs: number;
  logger: Logger;
  /** Each record moved in, by model (this process). */
  moved: Map<string, number>;
}

const seconds = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * Moving one record of the previous store into the plugin's (exactly once,
 * adopt_claim.lua), with what the plugin keeps beside it: a token's grant (and
 * its session, when bound to one) first, so whoever reads the token here finds
 * them; a grant's index of the person's grants at the site, Connected sites and
 * the `sub` the site knows; a session's uid copy, the devices list and its sids
 * at each site; a token's place in its grant's index. What an ending refused
 * (a revoked grant's tombstone, Block site's mark) is not kept. The previous
 * copy is removed a grace period later (removals.ts).
 */
export function createMove(deps: MoveDeps) {
  const { store, keys, adopt } = deps;
  const sites = siteKeys(store.prefix);
  const sessions = sessionKeys(store.prefix);
  const warned = new Set<string>();

  /** The grant's records in the previous store go too (each model's revokeByGrantId, then the grant); best effort, logged once per model. */
  async function revokePrevious(grantId: string): Promise<void> {
    const calls = [...GRANTABLE].map((model) => [model, () => deps.previous(model).revokeByGrantId(grantId)] as const);
    calls.push(['Grant', () => deps.previous('Grant').destroy(grantId)]);
    await Promise.all(calls.map(([model, call]) => Promise.resolve().then(call).catch((err: Error) => {
      if (warned.has(model)) return;
      warned.add(model);
      deps.logger.warn('adoption: the previous adapter refused to revoke a grant\'s records of this model', { model, reason: err.message });
    })));
  }

  /** A grant that must never move in (ended here): its moved mark for as long as a previous copy may live, and the previous copies gone. */
  async function forbidGrant(grantId: string, lifetimeMs = (deps.lifetimes.defaultTtl + deps.lifetimes.clockTolerance) * 1000): Promise<void> {
    await store.run(commands.putTtl(), [adopt.moved(keys.record('Grant', grantId))], [lifetimeMs, 'at', Date.now()]);
    await revokePrevious(grantId);
  }

  async function claim(key: string, tombstone: string, payload: string, lifetimeMs: number, consumedAt: number | undefined, writtenAt: number | undefined): Promise<number | 'moved'> {
    const [won, age] = await store.run(adoptClaim(), [key, adopt.moved(key), tombstone], [payload, lifetimeMs, consumedAt ?? '', writtenAt ?? '', Date.now()]) as [number, number?];
    return won === 1 ? 'moved' : age!;
  }

  /** A grant's place beside it; false when Block site (or Remove access, or a theft) ended it while it waited. */
  async function besideGrant(grantId: string, payload: AdapterPayload, lifetimeMs: number, via: Provider | undefined): Promise<boolean> {
    const { accountId, clientId } = payload as { accountId?: string; clientId?: string };
    if (!accountId || !clientId) return true;
    const now = Date.now();
    const indexed = await store.run(commands.indexAdd(), [keys.accountGrants(accountId, clientId), adopt.personSiteEnded(accountId, clientId)], [grantId, now + lifetimeMs, now]);
    if (indexed === 0) return false;
    if (clientId === CONSOLE_CLIENT_ID) return true;
    const scope = (payload.openid as { scope?: string } | undefined)?.scope ?? '';
    const [sub] = await Promise.all([
      deps.subject(accountId, clientId, via).catch(() => undefined),
      store.run(adoptSite(), [sites.sites(accountId)], [clientId, (seconds(payload.iat) ?? now / 1000) * 1000, scope]),
    ]);
    if (sub) await store.run(commands.hset(), [sites.subjects(clientId)], [sub, accountId]);
    return true;
  }

  /** A session in the devices list, and its sid at each site (Block site's back-channel logout). */
  async function besideSession(payload: AdapterPayload): Promise<void> {
    const { accountId, uid } = payload as { accountId?: string; uid?: string };
    const exp = seconds(payload.exp);
    if (!accountId || !uid || exp === undefined) return;
    const now = Date.now();
    const since = (seconds(payload.loginTs) ?? seconds(payload.iat) ?? now / 1000) * 1000;
    const authorizations = Object.entries((payload.authorizations ?? {}) as Record<string, { sid?: string }>);
    await Promise.all([
      store.run(commands.sessionSeen(), [sessions.sessions(accountId)], [uid, since, '', exp * 1000, MAX_SESSIONS]),
      ...authorizations.filter(([clientId, a]) => a.sid && clientId !== CONSOLE_CLIENT_ID)
        .map(([clientId, a]) => store.run(commands.indexAdd(), [sites.sids(accountId, clientId)], [a.sid!, exp * 1000, now])),
    ]);
  }

  /** A token in its grant's index; false when the grant was revoked here (the token is taken back). */
  async function besideToken(key: string, grantId: string, lifetimeMs: number): Promise<boolean> {
    const now = Date.now();
    const indexed = await store.run(commands.indexAdd(), [keys.grantIndex(grantId), keys.grantTombstone(grantId)], [key, now + lifetimeMs, now]);
    if (indexed !== 0) return true;
    await store.del([key]);
    return false;
  }

  async function personSiteEnded(payload: AdapterPayload): Promise<boolean> {
    const { accountId, clientId } = payload as { accountId?: string; clientId?: string };
    return !!accountId && !!clientId && (await store.get(adopt.personSiteEnded(accountId, clientId))) !== null;
  }

  async function refuseGrant(grantId: string, lifetimeMs: number): Promise<void> {
    await deps.revokeGrant(grantId);
    await forbidGrant(grantId, lifetimeMs);
  }

  /** The token's grant, and its session when it is bound to one, are moved first when they are still in the previous store. */
  async function ensureAround(payload: AdapterPayload, via: Provider | undefined): Promise<void> {
    const grantId = typeof payload.grantId === 'string' ? payload.grantId : undefined;
    const sessionUid = payload.expiresWithSession && typeof payload.sessionUid === 'string' ? payload.sessionUid : undefined;
    // One that cannot be read stays behind: the token then finds no grant (or session), as oidc-provider would there.
    const readable = (found: Promise<AdapterPayload | undefined | void>) => found.catch((err: unknown) => {
      if (err instanceof UnreadableRecordError) return undefined;
      throw err;
    });
    await Promise.all([
      grantId && store.hmget(keys.record('Grant', grantId), ['p']).then(async ([p]) => {
        if (p != null) return;
        const grant = await readable(deps.previous('Grant').find(grantId));
        if (grant) await move('Grant', grantId, grant, via);
      }),
      sessionUid && store.hmget(keys.sessionUid(sessionUid), ['p']).then(async ([p]) => {
        if (p != null) return;
        const session = await readable(deps.previous('Session').findByUid(sessionUid));
        if (session && typeof session.jti === 'string') await move('Session', session.jti, session, via);
      }),
    ]);
  }

  /** `via`: the provider whose configuration gives a site's subjects, when the plugin serves none in this process (the import). */
  async function move(model: string, id: string, raw: AdapterPayload, via?: Provider): Promise<MoveOutcome> {
    const { payload, consumedAt, lifetimeMs } = found(raw, deps.lifetimes);
    if (lifetimeMs === 0) {
      await deps.removals.now(model, id);
      return 'expired';
    }
    if (GRANTABLE.has(model)) await ensureAround(payload, via);
    if (model === 'Grant' && await personSiteEnded(payload)) {
      await refuseGrant(id, lifetimeMs);
      return 'refused';
    }
    const key = keys.record(model, id);
    const json = JSON.stringify(CREDENTIALS.has(model) ? withoutId(payload) : payload);
    // The "ended before" marks compare a grant's or session's own time within their second: the time it was made.
    const madeAt = model === 'Grant' ? seconds(payload.iat) : model === 'Session' ? seconds(payload.loginTs) ?? seconds(payload.iat) : undefined;
    const writtenAt = madeAt === undefined ? undefined : madeAt * 1000;
    const uid = model === 'Session' && typeof payload.uid === 'string' ? payload.uid : undefined;
    const userCode = typeof payload.userCode === 'string' ? payload.userCode : undefined;
    const [outcome] = await Promise.all([
      claim(key, model === 'Grant' ? keys.grantTombstone(id) : key, json, lifetimeMs, consumedAt, writtenAt),
      // Found by other lookups too: each claimed once, by whoever comes first.
      uid && claim(keys.sessionUid(uid), keys.sessionUid(uid), json, lifetimeMs, undefined, writtenAt),
      userCode && claim(keys.userCode(userCode), keys.userCode(userCode), JSON.stringify(id), lifetimeMs, undefined, undefined),
    ]);
    if (outcome === 'moved') {
      deps.moved.set(model, (deps.moved.get(model) ?? 0) + 1);
      let kept = true;
      if (model === 'Grant') kept = await besideGrant(id, payload, lifetimeMs, via);
      else if (model === 'Session') await besideSession(payload);
      else if (GRANTABLE.has(model) && typeof payload.grantId === 'string') kept = await besideToken(key, payload.grantId, lifetimeMs);
      if (!kept && model === 'Grant') await refuseGrant(id, lifetimeMs);
      deps.removals.later(model, id);
      return kept ? 'moved' : 'refused';
    }
    if (outcome < 0) {
      deps.removals.later(model, id);
      return 'here';
    }
    // Moved before: a copy its mover's removal missed (a process that ended) goes now, or when the mover's would have.
    if (outcome > deps.graceMs) await deps.removals.now(model, id);
    else deps.removals.later(model, id, deps.graceMs - outcome);
    return 'moved_before';
  }

  return { move, forbidGrant, revokePrevious };
}

export type Move = ReturnType<typeof createMove>;
