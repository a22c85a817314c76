import { importJWK, SignJWT, type JWK } from 'jose';

type Key = Awaited<ReturnType<typeof importJWK>>;

/** The provider's signing keys as the host configured them (configure()'s `jwks`). */
export type Jwks = { keys: JWK[] };

/**
 * Signs SETs with the provider's own RS256 key (the CAEP interoperability
 * profile: RS256, 2048 bits or more), `typ: secevent+jwt` (RFC 8417 section
 * 2.3), the key's `kid`, so a receiver verifies against the provider's JWKS.
 */
export function setSigner(jwks: () => Jwks | undefined) {
  let cached: { source: Jwks; key: Key; kid: string | undefined } | undefined;
  return async (claims: Record<string, unknown>): Promise<string> => {
    const source = jwks();
    if (!source) throw new Error('no signing keys: give the provider configuration a jwks');
    if (cached?.source !== source) {
      const jwk = source.keys.find((k) => k.kty === 'RSA' && k.d && (!k.alg || k.alg === 'RS256') && (!k.use || k.use === 'sig'));
      if (!jwk) throw new Error('no RS256 signing key in the provider\'s jwks');
      cached = { source, key: await importJWK(jwk, 'RS256'), kid: jwk.kid };
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'secevent+jwt', ...(cached.kid ? { kid: cached.kid } : {}) })
      .sign(cached.key);
  };
}
