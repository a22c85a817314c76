import type { AnswerAgainEvent, ReplayEvent } from '../adapters/store-adapter.ts';
import type { NotificationResult } from './notify/notification.ts';

/**
 * Emitted when a rotated refresh token or a redeemed authorization code is
 * presented again (RFC 9700 section 4.14.2: refresh token reuse means theft):
 * the grant, and every token of its chain, has been revoked by then. The
 * payload names the grant, site and person, never the token.
 */
export const REPLAY_EVENT = 'signout_notify.replay_detected';
/**
 * A refresh's answer was given again within the reuse leeway (docs/reuse-leeway.md
 * "Refresh that survives a lost answer"): the site, the grant and how long
 * after the rotation; never a token.
 */
export const REFRESH_REPLAYED_EVENT = 'signout_notify.refresh_replayed';
/** A request was answered 503 because Redis was unavailable. */
export const UNAVAILABLE_EVENT = 'signout_notify.unavailable';
/** POST /api/notify answered 202 (the result, as the site got it). */
export const NOTIFIED_EVENT = 'signout_notify.notified';
/** The letter worker finished one try of a letter. */
export const LETTER_EVENT = 'signout_notify.letter';
/** One try of a back-channel logout ended (docs/backchannel-logout.md): the site and the outcome, never the token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'signout_notify.backchannel_logout';
/** One try of a Shared Signals SET at a site ended (docs/shared-signals.md): the site and the outcome, never the SET. */
export const SHARED_SIGNALS_EVENT = 'signout_notify.shared_signals';

export interface UnavailableEvent {
  method: string;
  path: string;
  /** What failed (an ioredis message or the plugin's own), never data. */
  reason: string;
}

export interface NotifiedEvent {
  clientId: string;
  result: NotificationResult;
}

export interface LetterEvent {
  notificationId: string;
  /** `sent`; `skipped` (settings changed since the 202, already sent, no address...); `retry` (will be tried again); `failed` (given up). */
  outcome: 'sent' | 'skipped' | 'retry' | 'failed';
  reason?: string;
}

export interface BackchannelLogoutEvent {
  clientId: string;
  /** `sent` (the site answered 200 or 204); `retry` (will be tried again); `failed` (given up: "could not be reached"). */
  outcome: 'sent' | 'retry' | 'failed';
  /** Which try this was (the first, at the sign-out, is 1). */
  attempt: number;
  /** Why a try failed (the site's status, or the network error's message). */
  reason?: string;
}

export interface SharedSignalsEvent {
  clientId: string;
  /**
   * `sent` (pushed: the receiver answered 200, 202 or 204); `kept` (waiting
   * for the receiver's poll); `held` (its stream is paused); `retry` (will be
   * tried again); `failed` (given up: tries spent); `refused` (the
   * receiver's 400, or an endpoint the outbound guard refuses: not tried
   * again); `dropped` (the stream is disabled or gone, or holds as many as
   * it may).
   */
  outcome: 'sent' | 'kept' | 'held' | 'retry' | 'failed' | 'refused' | 'dropped';
  /** Which try this was (the first is 1). */
  attempt: number;
  /** Why a try failed (the receiver's status or error code, the guard's reason, the network error's message). */
  reason?: string;
}

/**
 * Every event the plugin emits, with its listener. Each is emitted on the
 * plugin (`plugin.on(name, listener)`, typed) and, once attached, on the
 * provider (`provider.on(name, ...)`, as oidc-provider's own events are).
 */
export interface SignoutNotifyEvents {
  [REPLAY_EVENT]: (event: ReplayEvent) => void;
  [REFRESH_REPLAYED_EVENT]: (event: AnswerAgainEvent) => void;
  [UNAVAILABLE_EVENT]: (event: UnavailableEvent) => void;
  [NOTIFIED_EVENT]: (event: NotifiedEvent) => void;
  [LETTER_EVENT]: (event: LetterEvent) => void;
  [BACKCHANNEL_LOGOUT_EVENT]: (event: BackchannelLogoutEvent) => void;
  [SHARED_SIGNALS_EVENT]: (event: SharedSignalsEvent) => void;
}

export type SignoutNotifyEventName = keyof SignoutNotifyEvents;

/** Sends a plugin event to the host (the plugin's and the provider's listeners). */
export type EmitEvent = <E extends SignoutNotifyEventName>(name: E, ...args: Parameters<SignoutNotifyEvents[E]>) => void;
