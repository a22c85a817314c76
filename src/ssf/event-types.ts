/**
 * The security events the transmitter sends (SSF 1.0, CAEP 1.0, RISC 1.0)
 * and the service's own (SSF 1.0 section 3.1.2 allows new types that use
 * the top-level `sub_id`).
 */
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';
/**
 * The service's own types are named after the package, not the issuer: the
 * same for every deployment and unchanged when an issuer moves
 * (docs/shared-signals.md "The service's own event types").
 */
const OWN = 'urn:oidc-signout-notify:secevent:event-type';

export const EVENT_TYPES = {
  sessionRevoked: `${CAEP}/session-revoked`,
  credentialChange: `${CAEP}/credential-change`,
  tokenClaimsChange: `${CAEP}/token-claims-change`,
  accountDisabled: `${RISC}/account-disabled`,
  accountPurged: `${RISC}/account-purged`,
  identifierChanged: `${RISC}/identifier-changed`,
  siteBlocked: `${OWN}:site-blocked`,
  accessRemoved: `${OWN}:access-removed`,
  verification: `${SSF}/verification`,
  streamUpdated: `${SSF}/stream-updated`,
} as const;

const { verification: _v, streamUpdated: _s, ...EVENTS } = EVENT_TYPES;

/** Every event type a receiver may ask for (events_supported). */
export const SUPPORTED_EVENT_TYPES: readonly string[] = Object.values(EVENTS);

/** What a stream that names no events_requested gets: the standard events (CAEP, RISC); the service's own only when asked for by name. */
export const DEFAULT_EVENT_TYPES: readonly string[] = SUPPORTED_EVENT_TYPES.filter((type) => !type.startsWith(OWN));

/** A cause the service tells sites of: which event, about whom, with which fields. */
export type SignalKind =
  | 'session_revoked' | 'credential_change' | 'token_claims_change'
  | 'account_disabled' | 'account_purged' | 'identifier_changed'
  | 'site_blocked' | 'access_removed';

/** Why a session ended (CAEP session-revoked's reason). */
export type SessionEndReason = 'sign_out' | 'sign_out_everywhere' | 'theft' | 'expired' | 'service';

const TYPE_OF: Record<SignalKind, string> = {
  session_revoked: EVENT_TYPES.sessionRevoked,
  credential_change: EVENT_TYPES.credentialChange,
  token_claims_change: EVENT_TYPES.tokenClaimsChange,
  account_disabled: EVENT_TYPES.accountDisabled,
  account_purged: EVENT_TYPES.accountPurged,
  identifier_changed: EVENT_TYPES.identifierChanged,
  site_blocked: EVENT_TYPES.siteBlocked,
  access_removed: EVENT_TYPES.accessRemoved,
};

/** The event type URI of a kind. */
export function eventTypeOf(kind: SignalKind): string {
  return TYPE_OF[kind];
}

/**
 * The names the service's own types had before they were named after the
 * package: under the issuer's URL (`<issuer>/secevent/event-type/site-blocked`).
 * A stream that asked for one of these by that name keeps getting it under
 * that name, so its receiver goes on recognising it; `[name, kind]` pairs.
 */
export function legacyEventTypes(issuer: string): [string, SignalKind][] {
  const base = `${issuer.replace(/\/+$/, '')}/secevent/event-type`;
  return [[`${base}/site-blocked`, 'site_blocked'], [`${base}/access-removed`, 'access_removed']];
}

/**
 * The name under which a stream gets a kind of event, or undefined when it
 * did not ask for it: the type's name, or its old name when the stream asked
 * by that one (legacyEventTypes).
 */
export function requestedTypeOf(kind: SignalKind, requested: readonly string[], issuer: string): string | undefined {
  const type = eventTypeOf(kind);
  if (requested.includes(type)) return type;
  return legacyEventTypes(issuer).find(([name, of]) => of === kind && requested.includes(name))?.[0];
}

/** The types a stream may have in events_supported and events_delivered: every supported one, and the old names it asked for. */
export function supportedFor(requested: readonly string[], issuer: string): string[] {
  return [...SUPPORTED_EVENT_TYPES, ...legacyEventTypes(issuer).map(([name]) => name).filter((name) => requested.includes(name))];
}
