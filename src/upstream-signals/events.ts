/**
 * The upstream events the receiver acts on, and what each does
 * (docs/upstream-signals.md "What each signal does"). CAEP 1.0, RISC 1.0
 * (OpenID RISC Event Types) and the RISC OAuth event Google sends.
 */
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';
const OAUTH = 'https://schemas.openid.net/secevent/oauth/event-type';

/**
 * What an upstream event does here. `sessions`: the service sessions that
 * signed in through the upstream end; `account`: every way in of the person
 * ends (endAccountAccess) and sign-in through the upstream is held;
 * `enabled`: the hold is lifted; `credential`: the link is marked and the
 * person told; `verification`: the transmitter checks the stream (SSF 1.0
 * section 8.1.4), nothing happens.
 */
export type UpstreamAction = 'sessions' | 'account' | 'enabled' | 'credential' | 'verification';

export const UPSTREAM_EVENTS: Readonly<Record<string, UpstreamAction>> = {
  [`${CAEP}/session-revoked`]: 'sessions',
  [`${RISC}/sessions-revoked`]: 'sessions',
  [`${RISC}/account-disabled`]: 'account',
  [`${RISC}/account-purged`]: 'account',
  [`${RISC}/account-enabled`]: 'enabled',
  [`${RISC}/tokens-revoked`]: 'credential',
  [`${OAUTH}/tokens-revoked`]: 'credential',
  [`${RISC}/account-credential-change-required`]: 'credential',
  [`${CAEP}/credential-change`]: 'credential',
  [`${SSF}/verification`]: 'verification',
  [`${RISC}/verification`]: 'verification',
};

/** Every event type the receiver knows (an upstream's `events` option picks among them). */
export const UPSTREAM_EVENT_TYPES: readonly string[] = Object.keys(UPSTREAM_EVENTS);
