import { createHmac } from 'node:crypto';

import type { SignalKind } from '../ssf/event-types.ts';
import type { ReasonKey } from '../ssf/signal.ts';
import type { SignalInput } from '../ssf/transmitter.ts';

/** Who made the access end (CAEP's initiating_entity). */
export type Initiator = 'user' | 'admin' | 'policy' | 'system';

/** One site of a loss of access, and the person's sessions there that ended (sids; none known: []). */
export interface SiteSessions {
  clientId: string;
  sids: string[];
  /**
   * false: no back-channel logout from here, where oidc-provider's
   * end_session sends the tokens itself (through the same queue and outcome
   * records, src/provider/backchannel.ts) or nothing was left to end there.
   */
  logout?: boolean | undefined;
}

/**
 * One loss of access, as its place in the code knows it: who, which sites
 * (and sessions there), the cause, the reason and who initiated it.
 */
export interface LossOfAccess {
  accountId: string;
  sites: SiteSessions[];
  /**
   * Names the cause once (`session:<uid>`, `expired:<uid>`, `access:<ids>`,
   * ...): a repeated trigger of one cause queues nothing twice. Never sent.
   */
  cause: string;
  reason: ReasonKey;
  initiator: Initiator;
  /** The Shared Signals event (session-revoked unless told otherwise). */
  kind?: SignalKind | undefined;
  /** The event's own members beside initiating_entity (claims, ...). */
  fields?: Record<string, unknown> | undefined;
  /** When access ended (ms since the epoch; now when absent). */
  at?: number | undefined;
  /**
   * false: no Shared Signals event from here, where it is told otherwise (a
   * deleted person's account-purged) or was told already (a repeated Block
   * site that heals a half-done one).
   */
  sharedSignals?: boolean | undefined;
}

export interface TellDeps {
  /** Back-channel logout of one site (src/notify/backchannel-logout.ts): one job per session there and cause. */
  queueLogout: (accountId: string, clientId: string, sids: string[], cause: string) => Promise<void>;
  /** Shared Signals (src/ssf/transmitter.ts): one queued cause (never throws: a failure is logged there). */
  signal: (signal: SignalInput) => Promise<void>;
  /** The service's secret (the provider's first cookie key): the cause's txn is keyed by it. */
  secret: () => string | Buffer;
}

/**
 * The cause's txn: the same for every trigger of one cause (a repeated
 * sweep or sign-out queues the event once), keyed by the service's secret,
 * so that no site can work it out from what it knows of the cause (its
 * sids, a public subject). It is never sent: each site's SET carries its
 * own, derived from it (src/ssf/signal.ts txnAt).
 */
export function causeTxn(secret: string | Buffer, accountId: string, cause: string): string {
  return createHmac('sha256', secret).update(`cause\0${accountId}\0${cause}`).digest('base64url').slice(0, 22);
}

/** The sites once each, their sids together. */
function bySite(sites: readonly SiteSessions[]): SiteSessions[] {
  const merged = new Map<string, Set<string>>();
  const logout = new Map<string, boolean>();
  for (const site of sites) {
    const known = merged.get(site.clientId) ?? new Set<string>();
    for (const sid of site.sids) known.add(sid);
    merged.set(site.clientId, known);
    logout.set(site.clientId, logout.get(site.clientId) === true || site.logout !== false);
  }
  return [...merged].map(([clientId, sids]) => ({ clientId, sids: [...sids], logout: logout.get(clientId) }));
}

/**
 * The one way the sites hear of a loss of access (docs/loss-of-access.md
 * "How sites are told"): every sign-out, expiry, Block site, Remove access,
 * removal from an organization, theft, ending by the service and deletion
 * calls it once. It queues, for each site, the back-channel logout (one job
 * per session there) and the Shared Signals event, both named after the
 * cause and the site, side by side. A channel that fails to queue does not
 * keep the others from their sites: the Shared Signals event's failure is
 * logged where it is queued (it never fails the cause); a logout's is
 * thrown once all were tried (Redis gone: the caller answers 503 and the
 * person tries again).
 */
export function createTell(deps: TellDeps) {
  return async function tellSites(loss: LossOfAccess): Promise<void> {
    const { accountId, cause } = loss;
    const sites = bySite(loss.sites);
    if (sites.length === 0) return;
    const signal = loss.sharedSignals === false ? undefined : deps.signal({
      kind: loss.kind ?? 'session_revoked', accountId, clientIds: sites.map((site) => site.clientId), reason: loss.reason,
      txn: causeTxn(deps.secret(), accountId, cause), at: loss.at ?? Date.now(), fields: { initiating_entity: loss.initiator, ...loss.fields },
    });
    const logouts = sites.filter((site) => site.logout).map(({ clientId, sids }) => deps.queueLogout(accountId, clientId, sids, cause));
    // Every channel of every site is tried; then a logout that could not be queued fails the caller.
    const settled = await Promise.allSettled([signal, ...logouts]);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  };
}

export type TellSites = ReturnType<typeof createTell>;
