import { hash } from 'node:crypto';

import type { AdapterPayload } from 'oidc-provider';

import { endedKeys } from '../src/store/ended-keys.ts';
import { keyAround } from '../src/store/store.ts';

/** Models whose records carry a grantId and die with their grant. */
export const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/**
 * Models whose id is a bearer credential a client holds (the token value of
 * opaque tokens and codes). They are stored under a SHA-256 of the id, and
 * the id (`jti`) is left out of the stored payload: whoever reads Redis, a
 * replica, MONITOR or a backup does not hold live tokens.
 */
/**
 * How long a client-credentials token's value is: the plugin's configuration
 * gives them 288 bits (48 characters; src/provider/configure.ts), so that
 * introspection and revocation, which oidc-provider also look up as client
 * credentials once the grant is enabled (Shared Signals receivers use it),
 * send no store command for a value of any other length.
 */
export const CLIENT_CREDENTIALS_BITS = 288;
export const CLIENT_CREDENTIALS_LENGTH = CLIENT_CREDENTIALS_BITS / 6;

export const CREDENTIALS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'PreAuthorizedCode',
  'RegistrationAccessToken',
  'InitialAccessToken',
]);

/** The key name part of a credential: SHA-256, base64url (43 characters); one-shot, half the cost of createHash. */
const digest = (id: string) => hash('sha256', id, 'base64url');

/** A credential's payload without its id, which is the credential itself. */
export function withoutId(payload: AdapterPayload): AdapterPayload {
  const { jti: _jti, ...rest } = payload;
  return rest;
}

/** Key layout; documented in docs/redis-keys.md. */
export function adapterKeys(prefix: string) {
  return {
    record: (model: string, id: string) => `${prefix}${model}:{${CREDENTIALS.has(model) ? digest(id) : id}}`,
    sessionUid: (uid: string) => `${prefix}Session:uid:{${uid}}`,
    userCode: (code: string) => `${prefix}DeviceCode:userCode:{${code}}`,
    grantIndex: (grantId: string) => `${prefix}Grant:{${grantId}}:records`,
    grantTombstone: (grantId: string) => `${prefix}Grant:{${grantId}}:revoked`,
    /** A refresh's answer, kept for the reuse leeway beside the refresh token it consumed. */
    answer: (recordKey: string) => `${recordKey}:answer`,
    /** Recorded when that refresh's new tokens were never written: only then may a retry rotate again. */
    unwritten: (recordKey: string) => `${recordKey}:unwritten`,
    /** A site's "ended before" mark (endSiteAccess): hash { grants }. */
    siteEnded: endedKeys(prefix).site,
    /** A person's "ended before" mark (endAccountAccess, sign out everywhere): hash { grants, sessions, keep }. */
    personEnded: endedKeys(prefix).person,
    accountGrants: (accountId: string, clientId: string) => `${prefix}account:{${accountId}}:grants:${clientId}`,
  };
}

export type AdapterKeys = ReturnType<typeof adapterKeys>;

/**
 * token_read builds a token's session, grant and mark keys from its record:
 * it gets their text before and after the id, so the layout stays in
 * adapterKeys alone.
 */
export function tokenReadKeyParts(prefix: string): { session: [string, string]; grant: [string, string]; site: [string, string]; person: [string, string] } {
  const keys = adapterKeys(prefix);
  return {
    session: keyAround(keys.sessionUid),
    grant: keyAround((id) => keys.record('Grant', id)),
    site: keyAround(keys.siteEnded),
    person: keyAround(keys.personEnded),
  };
}
