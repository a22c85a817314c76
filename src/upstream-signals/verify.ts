import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';

import { KeysUnavailable } from './keys.ts';

/** RFC 8935 section 2.4's error codes (IANA "Security Event Token Error Codes"). */
export type SetErrorCode = 'invalid_request' | 'invalid_key' | 'invalid_issuer' | 'invalid_audience' | 'authentication_failed' | 'access_denied';

/** A SET the receiver refuses: RFC 8935's 400 with `err` and `description`. */
export class SetRefused extends Error {
  readonly err: SetErrorCode;
  constructor(err: SetErrorCode, description: string) {
    super(description);
    this.err = err;
  }
}

/** A SET whose jti was received already: refused, but what it says was acted on (a poll acknowledges it). */
export class SetReplayed extends SetRefused {
  constructor() {
    super('invalid_request', 'a SET with this jti was received already');
  }
}

/** What an upstream's SET must be checked against. */
export interface SetCheck {
  issuer: string;
  audiences: readonly string[];
  keys: JWTVerifyGetKey;
  /** Accept a SET without a `typ` header (Google's Cross-Account Protection sends none). */
  allowUntyped: boolean;
  /** How old a SET's `iat` may be (s); a `jti` is remembered this long. */
  maxAgeSeconds: number;
  /** Clock skew allowed either way (s). */
  clockTolerance: number;
}

// Asymmetric only: an upstream publishes public keys (a shared secret would be a key of ours).
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const TYP = /^(application\/)?secevent\+jwt$/i;

/**
 * Verifies a pushed or polled SET as RFC 8417 and SSF 1.0 section 10 ask:
 * the signature by the upstream's published keys, `typ` (explicit typing,
 * RFC 8417 section 2.3), `iss` the upstream, `aud` one of ours, `iat`
 * within the window and not ahead of our clock, a `jti` and an `events`
 * object. Answers the claims; throws SetRefused (or KeysUnavailable when
 * the keys cannot be had).
 */
export async function verifySet(token: string, check: SetCheck, now = Date.now()): Promise<Record<string, unknown>> {
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token) || token.length > 65_536) throw new SetRefused('invalid_request', 'the body is not a signed SET (compact JWS)');
  let payload: Record<string, unknown>;
  let typ: unknown;
  try {
    ({ payload, protectedHeader: { typ } } = await jwtVerify(token, check.keys, { algorithms: ALGORITHMS, clockTolerance: check.clockTolerance, currentDate: new Date(now) }));
  } catch (err) {
    if (err instanceof KeysUnavailable) throw err;
    if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSMultipleMatchingKeys) {
      throw new SetRefused('invalid_key', 'the SET is not signed by a key the upstream publishes');
    }
    if (err instanceof errors.JWKSTimeout || (err instanceof Error && !(err instanceof errors.JOSEError))) throw new KeysUnavailable((err as Error).message);
    throw new SetRefused('invalid_request', 'the SET cannot be read, or its claims are not valid');
  }
  if (typ === undefined ? !check.allowUntyped : typeof typ !== 'string' || !TYP.test(typ)) throw new SetRefused('invalid_request', 'the SET\'s typ is not secevent+jwt');
  if (payload.iss !== check.issuer) throw new SetRefused('invalid_issuer', 'the SET\'s iss is not this upstream');
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!aud.some((a) => typeof a === 'string' && check.audiences.includes(a))) throw new SetRefused('invalid_audience', 'the SET\'s aud is none of ours');
  const iat = payload.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new SetRefused('invalid_request', 'the SET has no iat');
  const seconds = now / 1000;
  if (iat > seconds + check.clockTolerance) throw new SetRefused('invalid_request', 'the SET\'s iat is in the future');
  if (iat < seconds - check.maxAgeSeconds - check.clockTolerance) throw new SetRefused('invalid_request', 'the SET is older than this receiver accepts');
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new SetRefused('invalid_request', 'the SET has no jti');
  const events = payload.events;
  if (typeof events !== 'object' || events === null || Array.isArray(events) || Object.keys(events).length === 0) throw new SetRefused('invalid_request', 'the SET has no events');
  return payload;
}
