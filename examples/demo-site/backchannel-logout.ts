/**
 * OpenID Connect Back-Channel Logout 1.0 at the demo site: the provider says
 * that a session ended, in a logout token the site checks before it drops
 * anything.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type * as oidc from 'openid-client';

const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Whom a logout token names: the person (`sub`), the provider's session (`sid`), or both. */
export interface LogoutTarget { sub?: string | undefined; sid?: string | undefined }

/**
 * The check of a logout token (section 2.6): signed by the provider's keys,
 * its issuer and this client as audience, recent, typed `logout+jwt` when
 * typed at all, with the back-channel logout event, no nonce, and a `sub` or
 * a `sid`. Throws with the reason otherwise. The provider's keys are fetched
 * on first use.
 */
export function logoutTokenCheck(clientId: string) {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async (token: string, config: oidc.Configuration): Promise<LogoutTarget> => {
    const metadata = config.serverMetadata();
    jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: metadata.issuer,
      audience: clientId,
      requiredClaims: ['iat', 'jti', 'events'],
      maxTokenAge: '5 minutes',
      clockTolerance: 15,
    });
    if (protectedHeader.typ !== undefined && protectedHeader.typ.toLowerCase() !== 'logout+jwt') throw new Error('typ is not logout+jwt');
    const eventClaims = payload.events as Record<string, unknown> | undefined;
    if (typeof eventClaims?.[BACKCHANNEL_EVENT] !== 'object') throw new Error('no back-channel logout event');
    if ('nonce' in payload) throw new Error('a logout token carries no nonce');
    const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
    const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
    if (!sub && !sid) throw new Error('neither sub nor sid');
    return { sub, sid };
  };
}
