import { isIP } from 'node:net';

import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod';

import type { Passkey } from './passkeys.ts';

/**
 * The service as a WebAuthn relying party: its RP ID is the issuer's host
 * and the only origin it accepts is the issuer's. WebAuthn needs a secure
 * context (https, or http on localhost) and a domain as RP ID (an IP address
 * is refused by browsers): for any other issuer passkeys are off.
 */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(issuer: string, name: string): RelyingParty | undefined {
  const url = new URL(issuer);
  const host = url.hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return undefined;
  const secure = url.protocol === 'https:' || host === 'localhost' || host.endsWith('.localhost');
  return secure ? { id: host, origin: url.origin, name } : undefined;
}

const b64url = z.string().regex(/^[\w-]*$/).max(8192);

/** A browser's answer as @simplewebauthn/browser sends it, bounded; nothing else passes. */
function credentialSchema<R extends z.ZodRawShape>(response: R) {
  return z.object({
    id: b64url.min(1).max(1400),
    rawId: b64url.min(1).max(1400),
    type: z.literal('public-key'),
    response: z.object(response),
    authenticatorAttachment: z.string().max(32).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  });
}

const registrationSchema = credentialSchema({
  clientDataJSON: b64url,
  attestationObject: b64url,
  authenticatorData: b64url.optional(),
  transports: z.array(z.string().max(32)).max(10).optional(),
  publicKeyAlgorithm: z.number().int().optional(),
  publicKey: b64url.optional(),
});

const authenticationSchema = credentialSchema({
  clientDataJSON: b64url,
  authenticatorData: b64url,
  signature: b64url,
  userHandle: b64url.optional(),
});

function parseJson<T>(schema: z.ZodType<T>, text: string | undefined): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text ?? ''));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export const parseRegistration = (text: string | undefined) => parseJson(registrationSchema, text) as RegistrationResponseJSON | undefined;
export const parseAuthentication = (text: string | undefined) => parseJson(authenticationSchema, text) as AuthenticationResponseJSON | undefined;

/** WebAuthn user handles are the account id's bytes (a random UUID: nothing personal in it). */
export const userHandle = (accountId: string) => Buffer.from(accountId, 'utf8').toString('base64url');

const TIMEOUT_MS = 4 * 60_000;

/**
 * Creation options for a discoverable credential ("passkey") with user
 * verification; no attestation (the service trusts the person, not a make of
 * authenticator). The account's passkeys are excluded, so one authenticator
 * holds one passkey per account.
 */
export function registrationOptions(rp: RelyingParty, user: { accountId: string; name: string; displayName: string }, existing: Passkey[]): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: Buffer.from(user.accountId, 'utf8'),
    userName: user.name,
    userDisplayName: user.displayName,
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((k) => ({ id: k.id, transports: k.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

/** Request options for a discoverable sign-in (no allow list: the authenticator offers the account's passkey). */
export function authenticationOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', timeout: TIMEOUT_MS });
}

/** The new credential when the answer checks out (challenge, origin, RP ID, user presence and verification); else undefined. */
export async function verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, challenge: string, name: string): Promise<Passkey | undefined> {
  try {
    const result = await verifyRegistrationResponse({
      response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id,
      requireUserPresence: true, requireUserVerification: true,
    });
    if (!result.verified) return undefined;
    const info = result.registrationInfo;
    return {
      id: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: (info.credential.transports ?? response.response.transports ?? []).filter((t) => /^[a-z-]{1,32}$/.test(t)),
      name,
      createdAt: Date.now(),
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
    };
  } catch {
    return undefined;
  }
}

/** The assertion's new counter and backup state when it checks out against the stored passkey; else undefined. */
export async function verifyAuthentication(rp: RelyingParty, response: AuthenticationResponseJSON, challenge: string, passkey: Passkey): Promise<{ counter: number; backedUp: boolean } | undefined> {
  try {
    const result = await verifyAuthenticationResponse({
      response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id,
      credential: { id: passkey.id, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports as never },
      requireUserVerification: true,
    });
    return result.verified ? { counter: result.authenticationInfo.newCounter, backedUp: result.authenticationInfo.credentialBackedUp } : undefined;
  } catch {
    return undefined;
  }
}
