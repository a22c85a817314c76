import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** How old a proof may be (oidc-provider's own window for proofs without a nonce). */
const PROOF_WINDOW_SECONDS = 300;

/**
 * Whether a token endpoint request proves the DPoP key `jkt` (RFC 9449
 * section 4.3) with a proof not seen before: the reuse leeway's answer to a
 * public client's DPoP-bound refresh token. The provider would check the
 * proof on its own path, which a leeway answer does not reach, so it is
 * checked here in full: signature by the embedded key, `typ`, method, URL,
 * age, the key's thumbprint, and the proof's `jti` recorded as used
 * (oidc-provider's ReplayDetection, as its own check does).
 */
export async function proofMatches(ctx: KoaContextWithOIDC, jkt: string): Promise<boolean> {
  const proof = ctx.get('DPoP');
  if (!proof) return false;
  try {
    const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' });
    if (payload.htm !== ctx.method || typeof payload.htu !== 'string' || typeof payload.jti !== 'string' || typeof payload.iat !== 'number') return false;
    const htu = new URL(payload.htu);
    htu.hash = '';
    htu.search = '';
    if (htu.href !== new URL(ctx.oidc.urlFor('token')).href) return false;
    const now = Math.floor(Date.now() / 1000);
    if (Math.abs(now - payload.iat) > PROOF_WINDOW_SECONDS) return false;
    if (await calculateJwkThumbprint(protectedHeader.jwk!) !== jkt) return false;
    return await ctx.oidc.provider.ReplayDetection.unique(ctx.oidc.client!.clientId, payload.jti, now + PROOF_WINDOW_SECONDS);
  } catch {
    return false;
  }
}
