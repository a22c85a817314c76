/**
 * The strength of the reference provider's sign-ins (docs/sign-in-strength.md):
 * the `acr` each way in reaches on a small ladder, its `amr` (RFC 8176), and
 * what a site's `acr_values` or essential `acr` claim asks of a sign-in.
 */
import { interactionPolicy } from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** The authentication context classes, one per way in. */
export const ACR = {
  /** An emailed one-time code: one factor (the mailbox), phishable. */
  emailCode: 'urn:oidc-signout-notify:acr:email-code',
  /** An upstream's sign-in: its own method, which the service cannot see or vouch for. */
  federated: 'urn:oidc-signout-notify:acr:federated',
  /** A passkey with user verification: phishing-resistant (OpenID EAP ACR Values `phr`). */
  passkey: 'phr',
} as const;

export type Acr = (typeof ACR)[keyof typeof ACR];
export type Way = 'code' | 'passkey' | 'upstream';

/** The ladder: a higher rank satisfies a request for a lower one. */
const RANK: Readonly<Record<Acr, number>> = { [ACR.emailCode]: 1, [ACR.federated]: 1, [ACR.passkey]: 2 };

/** Discovery's `acr_values_supported` (oidc-provider's `acrValues`), strongest first. */
export const ACR_VALUES: readonly Acr[] = [ACR.passkey, ACR.emailCode, ACR.federated];

export const ACR_OF: Readonly<Record<Way, Acr>> = { code: ACR.emailCode, passkey: ACR.passkey, upstream: ACR.federated };

const isAcr = (value: unknown): value is Acr => typeof value === 'string' && Object.hasOwn(RANK, value);

/**
 * RFC 8176 amr of a passkey sign-in: the key (`hwk` when the authenticator
 * says it cannot leave it, `swk` for a synced passkey, whose key a passkey
 * provider's software copies between devices; no attestation is asked, so
 * this is the authenticator's word), `user` (user presence) and `mfa`
 * (user verification, required: the device's PIN or biometric besides the key).
 */
export function passkeyAmr(key: { deviceType: 'singleDevice' | 'multiDevice'; backedUp: boolean }): string[] {
  return [key.deviceType === 'multiDevice' || key.backedUp ? 'swk' : 'hwk', 'user', 'mfa'];
}

/** RFC 8176's registry (section 2); an upstream's amr passes on only with these values. */
const RFC8176 = new Set(['face', 'fpt', 'geo', 'hwk', 'iris', 'kba', 'mca', 'mfa', 'otp', 'pin', 'pwd', 'rba', 'retina', 'sc', 'sms', 'swk', 'tel', 'user', 'vbm', 'wia']);

/**
 * amr of a sign-in through an upstream: `fed` (not in RFC 8176's registry,
 * the value Microsoft Entra and others give a federated sign-in), then the
 * upstream's own amr where it gave one, registered values only.
 */
export function federatedAmr(upstream: unknown): string[] {
  const theirs = Array.isArray(upstream) ? upstream.filter((v): v is string => typeof v === 'string' && RFC8176.has(v)) : [];
  return ['fed', ...new Set(theirs)];
}

/** What a site asked of the sign-in: the acr values it may end with. */
export interface Requirement {
  accepted: ReadonlySet<Acr>;
  /** Through the claims parameter (OpenID Connect Core 5.5.1.1): an exact value, never a higher one. */
  essential: boolean;
}

interface AcrRequest { essential?: unknown; value?: unknown; values?: unknown }

/**
 * The `acr` request of an authorization request's parameters, as
 * oidc-provider reads it: `acr_values` (voluntary) replaces the claims
 * parameter's `id_token.acr`.
 */
function acrRequest(params: Record<string, unknown>): AcrRequest | undefined {
  if (typeof params.acr_values === 'string' && params.acr_values) return { values: params.acr_values.split(' ') };
  if (typeof params.claims !== 'string') return undefined;
  try {
    const acr = (JSON.parse(params.claims) as { id_token?: { acr?: unknown } } | null)?.id_token?.acr;
    return acr && typeof acr === 'object' ? acr : undefined;
  } catch {
    return undefined;
  }
}

function requirementOf(request: AcrRequest | undefined): Requirement | undefined {
  if (!request) return undefined;
  const asked = [...(Array.isArray(request.values) ? request.values : []), request.value];
  if (request.essential === true) {
    // Essential: exactly one of the values; none of ours is a requirement nobody meets here.
    return { accepted: new Set(asked.filter(isAcr)), essential: true };
  }
  // Voluntary: values this provider does not know are ignored; a known one
  // is met by any sign-in at least as high on the ladder.
  const known = asked.filter(isAcr);
  if (known.length === 0) return undefined;
  const floor = Math.min(...known.map((v) => RANK[v]));
  return { accepted: new Set(ACR_VALUES.filter((v) => RANK[v] >= floor)), essential: false };
}

/** The requirement of an interaction (its authorization request's parameters); undefined when the site asked nothing. */
export function requirement(params: Record<string, unknown>): Requirement | undefined {
  return requirementOf(acrRequest(params));
}

/** Whether a way in may finish this sign-in. */
export function allows(needed: Requirement | undefined, way: Way): boolean {
  return !needed || needed.accepted.has(ACR_OF[way]);
}

/**
 * The login prompt's check for a voluntary request (`acr_values`, or a
 * claims parameter's `acr` without `essential`): a session whose sign-in is
 * lower on the ladder signs in again. Essential requests are oidc-provider's
 * own checks (`essential_acr`, `essential_acrs`).
 */
export function acrValuesCheck(): InstanceType<typeof interactionPolicy.Check> {
  const { Check } = interactionPolicy;
  return new Check('acr_values', 'requested ACR could not be obtained', 'login_required', (ctx: KoaContextWithOIDC) => {
    const { oidc } = ctx;
    const needed = requirementOf(oidc.claims?.id_token?.acr ?? undefined);
    if (!needed || needed.essential || !oidc.session?.accountId) return Check.NO_NEED_TO_PROMPT;
    return isAcr(oidc.acr) && needed.accepted.has(oidc.acr) ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
  });
}
