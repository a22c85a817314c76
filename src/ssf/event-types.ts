/**
 * The security events the transmitter sends (SSF 1.0, CAEP 1.0, RISC 1.0)
 * and the service's own, whose URIs live under the issuer's URL (SSF 1.0
 * section 3.1.2 allows new types that use the top-level `sub_id`).
 */
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';

export const EVENT_TYPES = {
  sessionRevoked: `${CAEP}/session-revoked`,
  credentialChange: `${CAEP}/credential-change`,
  tokenClaimsChange: `${CAEP}/token-claims-change`,
  accountDisabled: `${RISC}/account-disabled`,
  accountPurged: `${RISC}/account-purged`,
  identifierChanged: `${RISC}/identifier-changed`,
  verification: `${SSF}/verification`,
  streamUpdated: `${SSF}/stream-updated`,
} as const;

/** The service's own event types, under its issuer: Block site and Remove access. */
export function ownEventTypes(issuer: string) {
  const base = `${issuer.replace(/\/+$/, '')}/secevent/event-type`;
  return { siteBlocked: `${base}/site-blocked`, accessRemoved: `${base}/access-removed` } as const;
}

/** Every event type a receiver may ask for (events_supported). */
export function supportedEventTypes(issuer: string): string[] {
  const { verification: _v, streamUpdated: _s, ...events } = EVENT_TYPES;
  return [...Object.values(events), ...Object.values(ownEventTypes(issuer))];
}

/** A cause the service tells sites of: which event, about whom, with which fields. */
export type SignalKind =
  | 'session_revoked' | 'credential_change' | 'token_claims_change'
  | 'account_disabled' | 'account_purged' | 'identifier_changed'
  | 'site_blocked' | 'access_removed';

/** Why a session ended (CAEP session-revoked's reason). */
export type SessionEndReason = 'sign_out' | 'sign_out_everywhere' | 'theft' | 'expired' | 'service';

/** The event type URI of a kind. */
export function eventTypeOf(kind: SignalKind, issuer: string): string {
  switch (kind) {
    case 'session_revoked': return EVENT_TYPES.sessionRevoked;
    case 'credential_change': return EVENT_TYPES.credentialChange;
    case 'token_claims_change': return EVENT_TYPES.tokenClaimsChange;
    case 'account_disabled': return EVENT_TYPES.accountDisabled;
    case 'account_purged': return EVENT_TYPES.accountPurged;
    case 'identifier_changed': return EVENT_TYPES.identifierChanged;
    case 'site_blocked': return ownEventTypes(issuer).siteBlocked;
    case 'access_removed': return ownEventTypes(issuer).accessRemoved;
  }
}
