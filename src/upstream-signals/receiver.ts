import { hash } from 'node:crypto';

import type { Logger } from '../host.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import type { ClientCredentials } from './credentials.ts';
import { UPSTREAM_EVENTS, type UpstreamAction } from './events.ts';
import { upstreamKeys, type KeySource } from './keys.ts';
import { actionRecord, claimOnce } from './scripts.ts';
import { setSubject, type UpstreamSubject } from './subject.ts';
import { SetRefused, SetReplayed, verifySet } from './verify.ts';

/** Polling an upstream's stream (RFC 8936) instead of receiving its pushes (option `upstreamSignals.upstreams[].poll`). */
export interface PollConfig extends ClientCredentials {
  /** The transmitter's poll endpoint (the stream's `delivery.endpoint_url`). */
  endpoint: string;
  /** How often (ms). */
  everyMs: number;
}

/** An upstream whose signals the service hears (option `upstreamSignals.upstreams`). */
export interface SignalUpstream extends KeySource {
  /** The upstream's id, as the host's sign-in names it (the reference provider's CONFIG_FILE `upstreams[].id`); in the push URL. */
  id: string;
  /** How letters name it ("Google"). */
  name: string;
  /** The `aud` values the upstream addresses us by (Google: the service's OAuth client ids). */
  audiences: string[];
  /** The event types acted on; the others are refused as unknown. */
  events: string[];
  allowUntypedSets: boolean;
  /** Its stream is polled (RFC 8936) rather than pushed to (./poll.ts). */
  poll?: PollConfig | undefined;
  /** Our client credentials at it for connect() (./connect.ts): the push stream made or adopted there. */
  stream?: ClientCredentials | undefined;
}

/** The account linked to the upstream's subject, and the upstream `sub` of that link (host hook `upstreamSignals.account`). */
export interface LinkedAccount {
  accountId: string;
  sub: string;
}

/** Finds the account LINKED to the upstream's subject (never one matched by address alone). */
export type LinkedAccountLookup = (upstreamId: string, subject: UpstreamSubject) => Promise<LinkedAccount | undefined> | LinkedAccount | undefined;

/** Security notices the receiver gives (src/notify/security-notices.ts). */
export type UpstreamNoticeKind = 'upstream_sessions_ended' | 'upstream_account_disabled' | 'upstream_credential_change';

/** What a SET did, kept for the operator (`upstreamSignals.recent(upstreamId)`). */
export interface UpstreamActionRecord {
  at: number;
  /** The SET's jti (or the Global Token Revocation request's own id). */
  jti: string;
  /** The event type (a URI), or `global-token-revocation`. */
  event: string;
  action: UpstreamAction;
  /** `done`; `unknown_subject` and `no_subject` (acknowledged and dropped); `verification`. */
  outcome: 'done' | 'unknown_subject' | 'no_subject' | 'verification';
  accountId?: string | undefined;
  /** For `sessions`: how many service sessions ended. */
  ended?: number | undefined;
}

/** Why sign-in through an upstream is held for its account (until the upstream says account-enabled). */
export interface UpstreamHold {
  at: number;
  jti: string;
  event: string;
  accountId: string;
}

export interface ReceiverDeps {
  store: Store;
  logger: Logger;
  upstreams: SignalUpstream[];
  account: LinkedAccountLookup;
  /** Every session, grant and refresh token of the person ends (the plugin's endAccountAccess). */
  endAccountAccess: (accountId: string) => Promise<unknown>;
  /** The person's service sessions that signed in through the upstream end (sites told); how many. */
  endSessionsThrough: (accountId: string, upstreamId: string) => Promise<number>;
  notice: (accountId: string, kind: UpstreamNoticeKind, details: { name: string; ref: string }) => Promise<unknown>;
  maxAgeSeconds: number;
  clockTolerance: number;
}

/** Entries of the operator's record per upstream, and how long it lasts after its last entry. */
const RECORD_MAX = 1000;
const RECORD_TTL_MS = 90 * 86_400_000;

const digest = (value: string) => hash('sha256', value, 'base64url');

/** Key layout; documented in docs/redis-keys.md ("Upstream signals"). */
export function upstreamSignalKeys(prefix: string) {
  return {
    /** String, TTL the replay window: a SET's jti was received. */
    jti: (upstream: string, jti: string) => `${prefix}upstream-jti:{${upstream}:${digest(jti)}}`,
    /** Sorted set of JSON entries by time: what the upstream's SETs did (newest 1000, 90 days after the last). */
    actions: (upstream: string) => `${prefix}upstream-signals:{${upstream}}:actions`,
    /** Hash sha256(sub) -> JSON UpstreamHold: sign-in through the upstream held. Persistent until account-enabled. */
    held: (upstream: string) => `${prefix}upstream-signals:{${upstream}}:held`,
    /** Hash sha256(sub) -> JSON { at, jti, event }: the upstream said the account's credentials changed or its tokens were revoked. */
    marked: (upstream: string) => `${prefix}upstream-signals:{${upstream}}:marked`,
    /** Hash { stream (JSON UpstreamStream), state (the last 5 asked, space-separated), verifiedAt? }: the push stream connect() made or adopted at the upstream. Persistent (configuration). */
    stream: (upstream: string) => `${prefix}upstream-signals:{${upstream}}:stream`,
    /** String, TTL one poll cycle: an instance is polling the upstream (RFC 8936). */
    poll: (upstream: string) => `${prefix}upstream-poll:{${upstream}}`,
  };
}

/**
 * The receiver of upstreams' Shared Signals and RISC events (SSF 1.0, RFC
 * 8417, RFC 8935): verifies each SET, finds the account linked to its
 * subject, and acts (docs/upstream-signals.md).
 */
export function createUpstreamReceiver(deps: ReceiverDeps) {
  const keys = upstreamSignalKeys(deps.store.prefix);
  const byId = new Map(deps.upstreams.map((u) => [u.id, { upstream: u, keys: upstreamKeys(u) }]));

  async function record(upstreamId: string, entry: UpstreamActionRecord): Promise<void> {
    await deps.store.run(actionRecord(), [keys.actions(upstreamId)], [entry.at, JSON.stringify(entry), RECORD_MAX, RECORD_TTL_MS]);
    deps.logger.warn('upstream signal', { upstream: upstreamId, ...entry });
  }

  /**
   * The upstream said the account is disabled, purged or to be revoked
   * entirely: every way in ends, sign-in through the upstream is held, and
   * the person is told.
   */
  async function endAccount(upstream: { id: string; name: string } | undefined, found: LinkedAccount, jti: string, event: string, at: number, by: string): Promise<void> {
    if (upstream) {
      const hold: UpstreamHold = { at, jti, event, accountId: found.accountId };
      await deps.store.run(commands.hset(), [keys.held(upstream.id)], [digest(found.sub), JSON.stringify(hold)]);
    }
    await deps.endAccountAccess(found.accountId);
    await deps.notice(found.accountId, 'upstream_account_disabled', { name: by, ref: upstream?.id ?? 'global-token-revocation' });
  }

  async function act(upstream: SignalUpstream, action: UpstreamAction, found: LinkedAccount, jti: string, event: string, at: number): Promise<Partial<UpstreamActionRecord>> {
    switch (action) {
      case 'sessions': {
        const ended = await deps.endSessionsThrough(found.accountId, upstream.id);
        await deps.notice(found.accountId, 'upstream_sessions_ended', { name: upstream.name, ref: upstream.id });
        return { ended };
      }
      case 'account':
        await endAccount(upstream, found, jti, event, at, upstream.name);
        return {};
      case 'enabled':
        await deps.store.run(commands.hdel(), [keys.held(upstream.id)], [digest(found.sub)]);
        return {};
      case 'credential':
        await deps.store.run(commands.hset(), [keys.marked(upstream.id)], [digest(found.sub), JSON.stringify({ at, jti, event })]);
        await deps.notice(found.accountId, 'upstream_credential_change', { name: upstream.name, ref: upstream.id });
        return {};
      default:
        return {};
    }
  }

  return {
    keys,
    /** Whether the upstream is one whose signals are heard. */
    has: (upstreamId: string) => byId.has(upstreamId),

    /**
     * One pushed (or polled) SET of the upstream: verified, its jti claimed
     * once, then each event it carries acted on. Throws SetRefused (RFC 8935
     * section 2.4) or KeysUnavailable; an unknown subject is acknowledged and
     * dropped.
     */
    async receive(upstreamId: string, token: string): Promise<void> {
      const entry = byId.get(upstreamId);
      if (!entry) throw new SetRefused('invalid_issuer', 'no such upstream');
      const { upstream } = entry;
      const payload = await verifySet(token, {
        issuer: upstream.issuer, audiences: upstream.audiences, keys: entry.keys, allowUntyped: upstream.allowUntypedSets,
        maxAgeSeconds: deps.maxAgeSeconds, clockTolerance: deps.clockTolerance,
      });
      const events = Object.entries(payload.events as Record<string, unknown>)
        .filter(([type, event]) => UPSTREAM_EVENTS[type] !== undefined && upstream.events.includes(type) && typeof event === 'object' && event !== null && !Array.isArray(event));
      if (events.length === 0) throw new SetRefused('invalid_request', 'the SET carries no event this receiver acts on');
      const jti = payload.jti as string;
      const jtiKey = keys.jti(upstream.id, jti);
      const windowMs = (deps.maxAgeSeconds + 2 * deps.clockTolerance) * 1000;
      if ((await deps.store.run(claimOnce(), [jtiKey], [windowMs])) !== 1) throw new SetReplayed();
      try {
        for (const [type, event] of events) {
          const action = UPSTREAM_EVENTS[type]!;
          const at = Date.now();
          if (action === 'verification') {
            await record(upstream.id, { at, jti, event: type, action, outcome: 'verification' });
            // The answer to connect()'s verification: its state comes back.
            const state = (event as { state?: unknown }).state;
            const [asked] = await deps.store.hmget(keys.stream(upstream.id), ['state']);
            if (typeof state === 'string' && asked?.split(' ').includes(state)) await deps.store.run(commands.hset(), [keys.stream(upstream.id)], ['verifiedAt', String(at)]);
            continue;
          }
          const subject = setSubject(payload, event as Record<string, unknown>);
          // A subject of another issuer is no link of this upstream's.
          const found = subject && (!('iss' in subject) || subject.iss === upstream.issuer) ? await deps.account(upstream.id, subject) : undefined;
          if (!found) {
            await record(upstream.id, { at, jti, event: type, action, outcome: subject ? 'unknown_subject' : 'no_subject' });
            continue;
          }
          const done = await act(upstream, action, found, jti, type, at);
          await record(upstream.id, { at, jti, event: type, action, outcome: 'done', accountId: found.accountId, ...done });
        }
      } catch (err) {
        // Not done: the transmitter's retry may do it.
        await deps.store.del([jtiKey]).catch(() => {});
        throw err;
      }
    },

    /**
     * Global Token Revocation: every way in of the person ends, as for
     * account-disabled; sign-in through `upstream` is held when the request
     * named the person by that upstream's subject. `by`: who asked, as the
     * notice names it. Recorded under the upstream, else under
     * `global-token-revocation`.
     */
    async revokeAll(upstream: { id: string; name: string } | undefined, found: LinkedAccount, id: string, by: string): Promise<void> {
      const at = Date.now();
      await endAccount(upstream, found, id, 'global-token-revocation', at, by);
      await record(upstream?.id ?? 'global-token-revocation', { at, jti: id, event: 'global-token-revocation', action: 'account', outcome: 'done', accountId: found.accountId });
    },

    /** Why sign-in through the upstream is held for this upstream account, if it is (the host's sign-in asks before it lets the person in). */
    async held(upstreamId: string, sub: string): Promise<UpstreamHold | undefined> {
      const [raw] = await deps.store.hmget(keys.held(upstreamId), [digest(sub)]);
      return raw ? JSON.parse(raw) as UpstreamHold : undefined;
    },

    /** What the upstream said of this upstream account's credentials, if anything (the link is marked). */
    async marked(upstreamId: string, sub: string): Promise<{ at: number; jti: string; event: string } | undefined> {
      const [raw] = await deps.store.hmget(keys.marked(upstreamId), [digest(sub)]);
      return raw ? JSON.parse(raw) as { at: number; jti: string; event: string } : undefined;
    },

    /** What the upstream's SETs did, newest first (the operator's view). */
    async recent(upstreamId: string): Promise<UpstreamActionRecord[]> {
      const entries = await deps.store.zentries(keys.actions(upstreamId));
      return entries.map(([json]) => JSON.parse(json) as UpstreamActionRecord).sort((a, b) => b.at - a.at);
    },
  };
}

export type UpstreamReceiver = ReturnType<typeof createUpstreamReceiver>;
