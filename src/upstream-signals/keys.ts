import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';

/** Where an upstream's SET signing keys are: its JWKS, or its SSF / RISC configuration document naming it. */
export interface KeySource {
  issuer: string;
  /** The JWKS URL (an SSF transmitter's `jwks_uri`). */
  jwksUri?: string | undefined;
  /**
   * The transmitter's configuration document (`<issuer>/.well-known/ssf-configuration`,
   * Google's `https://accounts.google.com/.well-known/risc-configuration`):
   * its `jwks_uri` is read from it, and its `issuer` must be the upstream's.
   */
  configurationUrl?: string | undefined;
}

/** The configuration document is read again after this long (its jwks_uri may move). */
const CONFIGURATION_TTL_MS = 60 * 60_000;
const FETCH_TIMEOUT_MS = 5000;

/** The keys could not be had (the upstream or its document is unreachable, or says another issuer): not the SET's fault. */
export class KeysUnavailable extends Error {}

/**
 * The upstream's keys, as jose's remote JWKS: cached, and fetched again when
 * a SET names a `kid` it does not hold (key rotation), at most every 30 s.
 * Operator-configured URLs, not ones a site can aim: no SSRF guard here
 * (docs/choices.md).
 */
export function upstreamKeys(source: KeySource): JWTVerifyGetKey {
  let jwks: { at: number; uri: string; get: JWTVerifyGetKey } | undefined;
  const remote = (uri: string) => createRemoteJWKSet(new URL(uri), { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });

  async function current(): Promise<JWTVerifyGetKey> {
    if (source.jwksUri) return (jwks ??= { at: 0, uri: source.jwksUri, get: remote(source.jwksUri) }).get;
    if (jwks && Date.now() - jwks.at < CONFIGURATION_TTL_MS) return jwks.get;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(source.configurationUrl!, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
      if (!res.ok) throw new Error(`status ${res.status}`);
      document = await res.json() as typeof document;
    } catch (err) {
      if (jwks) return jwks.get;
      throw new KeysUnavailable(`configuration document: ${(err as Error).message}`);
    }
    if (document.issuer !== source.issuer || typeof document.jwks_uri !== 'string') {
      throw new KeysUnavailable('configuration document names another issuer or no jwks_uri');
    }
    const uri = document.jwks_uri;
    jwks = { at: Date.now(), uri, get: jwks?.uri === uri ? jwks.get : remote(uri) };
    return jwks.get;
  }

  return async (header, token) => (await current())(header, token);
}
