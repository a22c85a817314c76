import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { StoreAdapter } from '../adapters/store-adapter.ts';
import type { Adoption } from './adopt/adoption.ts';
import type { RecentSignIn, RecentSignInRequest } from './console/recent-sign-in.ts';
import type { SignoutNotifyEventName, SignoutNotifyEvents } from './events.ts';
import type { HttpContext } from './http/context.ts';
import type { Logger } from './host.ts';
import type { Mailer } from './mail/mailer.ts';
import type { Inbox } from './notify/inbox.ts';
import type { LetterQueue } from './notify/letters.ts';
import type { QueueCounts } from './queue/counts.ts';
import type { SecurityNoticeDetails, SecurityNoticeKind, SecurityNoticeResult } from './notify/security-notices.ts';
import type { Senders } from './notify/senders.ts';
import type { ResolvedOptions } from './options.ts';
import type { Organizations } from './orgs/organizations.ts';
import type { Preferences } from './preferences.ts';
import type { Sessions } from './sessions/sessions.ts';
import type { SharedSignals } from './ssf/host-api.ts';
import type { BlockResult, RemoveAccessResult, RemoveMemberResult, UnblockResult } from './sites/access.ts';
import type { ConnectedSite, ConnectedSites } from './sites/connected-sites.ts';
import type { DeleteAccountResult } from './sites/delete-account.ts';
import type { Store } from './store/store.ts';
import type { UpstreamStream } from './upstream-signals/connect.ts';
import type { UpstreamActionRecord, UpstreamHold } from './upstream-signals/receiver.ts';

/** The plugin as a host holds it (`createSignoutNotify`): its parts, and what a host calls. */
export interface SignoutNotify {
  /** Validated options with defaults applied. */
  readonly options: ResolvedOptions;
  /** Where the plugin keeps its data; hosts may keep their own records in it too. */
  readonly store: Store;
  /** The oidc-provider adapter and grant revocation. */
  readonly adapter: StoreAdapter;
  /** Sends letters (SMTP, the host's transport, or the development outbox). */
  readonly mailer: Mailer;
  readonly logger: Logger;
  /** The sites each person signed in to (Connected sites). */
  readonly sites: ConnectedSites;
  /** The person's service sessions: where they are signed in. */
  readonly sessions: Sessions;
  readonly organizations: Organizations;
  /** Mute switches and category settings per person and site. */
  readonly senders: Senders;
  /** The person's inbox at the service. */
  readonly inbox: Inbox;
  /** What the person chose in the console (language). */
  readonly preferences: Preferences;
  /** The durable letter queue. */
  readonly letters: LetterQueue;
  /**
   * Starts sending letters in this process (attach() does it unless
   * `letters.worker` is false). A worker process that never attaches passes
   * its provider, built with the service's configuration: letters take the
   * issuer, the sites' names and the cookie keys (unsubscribe links) from it.
   * `runLetterWorker` from `oidc-signout-notify/worker` wraps this with
   * graceful shutdown.
   */
  startLetterWorker(provider?: Provider): void;
  /**
   * Tells the person's sites through Shared Signals (CAEP credential-change,
   * RISC account-disabled, account-purged, identifier-changed): the host
   * calls these when it changes the account (docs/shared-signals.md). The
   * letter worker delivers the SETs too.
   */
  readonly sharedSignals: SharedSignals;
  /**
   * Service sessions that end by their lifetime (docs/session-expiry.md):
   * `sweep()` tells the sites of every session that expired by now, as the
   * repeatable sweep does every `sessionExpiry.sweepEveryMs`; resolves with
   * how many sites were told. Safe beside the sweeps of other instances.
   */
  readonly sessionExpiry: { sweep(): Promise<number> };
  /** Stops sending letters (and Shared Signals, and retrying back-channel logouts) in this process once those in hand are done; the rest wait for another worker. */
  stopLetterWorker(): Promise<void>;
  /**
   * The plugin's queues as an operator watches them (docs/operations.md
   * "The queues"): letters, back-channel logouts, Shared Signals and the
   * session expiry sweep, each with its jobs waiting, active, delayed and
   * failed and how long the oldest waiting one has waited. Read-only; starts
   * no worker. On Redis only: the embedded store's queues live in the
   * service's process (a TypeError says so).
   */
  queues(): Promise<QueueCounts>;
  /**
   * Tells a site that the person's sessions (or, for a site that does not
   * require `sid`, all their access) there ended, by OpenID back-channel
   * logout through the plugin's queue: tried at once, retried with backoff,
   * shown on the console, a `site_unreachable` notice when given up
   * (docs/backchannel-logout.md). `cause` names the event: calling again
   * with the same cause sends nothing twice.
   */
  queueLogout(accountId: string, clientId: string, sids: string[], cause: string): Promise<void>;
  /**
   * Listens to one of the plugin's events (typed; see SignoutNotifyEvents).
   * The same events reach `provider.on(...)` once attached. Returns a
   * function that removes the listener.
   */
  on<E extends SignoutNotifyEventName>(event: E, listener: SignoutNotifyEvents[E]): () => void;
  /** Every site the person signed in to, most recently used first. */
  connectedSites(accountId: string): Promise<ConnectedSite[]>;
  /**
   * Block site: revokes the person's grants and tokens at the site, sends it
   * back-channel logout, and refuses it tokens until unblocked. Needs attach().
   */
  blockSite(accountId: string, clientId: string): Promise<BlockResult>;
  unblockSite(accountId: string, clientId: string): Promise<UnblockResult>;
  /**
   * Remove access: revokes the person's grants and tokens at the site and
   * sends it back-channel logout, without blocking it: the next sign-in there
   * asks for consent again. Needs attach() for back-channel logout.
   */
  removeAccess(accountId: string, clientId: string): Promise<RemoveAccessResult>;
  /** Remove access from every connected site; returns the client ids whose access ended. */
  removeAllAccess(accountId: string): Promise<string[]>;
  /**
   * Ends the site's access for every person at once (its secret leaked, the
   * site was compromised): every grant of the site issued up to now is over,
   * with every token of it (introspection `active: false`, refresh
   * `invalid_grant`, the reuse leeway included). One write, whatever the
   * number of grants: a mark the token reads compare with. The site gets no
   * back-channel logout (it may be the attacker's); each person's console
   * shows it as ended by the service, and their next sign-in there asks for
   * consent again. Returns when it took effect (ms since the epoch).
   */
  endSiteAccess(clientId: string): Promise<number>;
  /**
   * Ends every grant and every service session of one person, at every site,
   * at once (the account was taken over, or is being closed): their tokens
   * die with them, each site the person had a session at gets back-channel
   * logout, and the next sign-in anywhere starts afresh. Returns when it took
   * effect (ms since the epoch).
   */
  endAccountAccess(accountId: string): Promise<number>;
  /**
   * What upstream identity providers said (docs/upstream-signals.md): the
   * host's upstream sign-in asks `held` before it lets a person in, its
   * console may show `marked`, and the operator reads `recent`.
   */
  readonly upstreamSignals: {
    /** Why sign-in through the upstream is held for this upstream account (`sub`), until the upstream says account-enabled; undefined when it is not. */
    held(upstreamId: string, sub: string): Promise<UpstreamHold | undefined>;
    /** The upstream said this account's credentials changed or its tokens were revoked (the link is marked). */
    marked(upstreamId: string, sub: string): Promise<{ at: number; jti: string; event: string } | undefined>;
    /** What the upstream's SETs did, newest first, each with its jti (the last 1000, 90 days). */
    recent(upstreamId: string): Promise<UpstreamActionRecord[]>;
    /**
     * Makes or adopts the push stream at an SSF transmitter upstream (its
     * `stream` credentials and `configurationUrl`) to `/upstream-signals/<id>`,
     * and asks it for a verification. Throws when the upstream refuses.
     */
    connect(upstreamId: string): Promise<UpstreamStream>;
    /** The stream connect() made or adopted, with `verifiedAt` once the upstream's verification arrived. */
    stream(upstreamId: string): Promise<UpstreamStream | undefined>;
  };
  /**
   * The person is deleted (the host calls this when it deletes them; docs/security.md
   * "Deleting a person"): RISC account-purged to their sites, every service
   * session and grant ends (each site with a grant or session gets its
   * back-channel logout), letters and Shared Signals causes about them are
   * taken out of the queues, and every key the plugin holds for them is
   * erased (docs/redis-keys.md "What deleteAccount erases"). Safe to call
   * again: a second call finishes one cut short. Walks every key under the
   * prefix once (SCAN, on every master of a Cluster). The host erases its
   * own records of the person.
   */
  deleteAccount(accountId: string): Promise<DeleteAccountResult>;
  /**
   * Taking over the previous adapter's records (`previousAdapter`; undefined
   * without it): the window's state, the bulk import, this process' counts.
   * docs/upgrading.md "Taking over from your previous adapter".
   */
  readonly adoption: Adoption | undefined;
  /**
   * Tells the person of something that concerns their account's security
   * (docs/security.md "Security notices"): an inbox entry from the service
   * and a letter in their language, which no mute, category setting or
   * unsubscribe link holds back, with the way out ("Not you? See where you
   * are signed in"). The plugin sends `new_browser` and `sessions_ended`
   * itself; a host sends the others from its own pages (a passkey added or
   * removed, an account linked or unlinked). The same notice about the same
   * thing (`details.ref`, else what it shows) is told once a day:
   * `held_back` then; a kind the host turned off (option `securityNotices`)
   * answers `off` and tells nothing. Every part of `details` is shown as
   * text under the text rules. Throws a TypeError for a kind it does not know.
   */
  securityNotice(accountId: string, kind: SecurityNoticeKind, details?: SecurityNoticeDetails): Promise<SecurityNoticeResult>;
  /**
   * For a host's own console route that adds a way into the account (a
   * passkey, a linked account, a new address): whether the person of the
   * request's service session signed in within `console.recentSignInSeconds`
   * (docs/security.md "A recent sign-in for what adds access"). `{ recent:
   * true }`: go on. Otherwise do nothing and send the person to
   * `signInAgain` (a 303 for a form, or hand it to a script): the page there
   * says why (`request.action`'s sentence, in their language) and signs them
   * in again (`max_age=0`, every way they have), then brings them back to
   * `request.back`, where they press the action again. Call it on the
   * request that acts (a POST), not only on the page before. Needs attach();
   * throws a TypeError for an unknown action or a `back` outside /console.
   */
  recentSignIn(ctx: HttpContext, request: RecentSignInRequest): Promise<RecentSignIn>;
  /**
   * An organization admin removes a member: the member's grants at the
   * organization's sites are revoked, back-channel logout is sent, and later
   * sign-ins and refreshes there are refused. Authorization is the caller's
   * job (the console route checks the admin).
   */
  removeMember(orgId: string, accountId: string): Promise<RemoveMemberResult>;
  /** Returns the host's configuration with the plugin's settings merged in. */
  configure<T extends Configuration>(host: T): T;
  /**
   * Mounts the plugin's routes and event handlers on a provider built from
   * configure(). Throws a TypeError when letters would go to the log (no
   * transport, no smtpUrl) for an issuer that is not on loopback, unless
   * `mail.outbox` is `'log'`.
   */
  attach(provider: Provider): void;
  /** Stops timers and transports the plugin created (not the host's Redis client). */
  close(): Promise<void>;
}
