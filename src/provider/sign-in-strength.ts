import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

/**
 * The sign-in behind a token, as sites read it (RFC 9470 section 6, RFC 7662,
 * OpenID Connect Core section 2): `acr`, `amr` and `auth_time` in ID tokens,
 * in access tokens' introspection (and JWT access tokens) and in refresh
 * tokens' introspection. Whatever the host's interaction put in its login
 * result (`login: { acr, amr, ts }`) comes through; the values are the host's.
 */
export interface SignInStrength {
  acr?: string;
  amr?: string[];
  auth_time?: number;
}

/** What a code, refresh token, device code or CIBA request keeps of its sign-in. */
interface Source {
  acr?: string | undefined;
  amr?: string[] | undefined;
  authTime?: number | undefined;
}

type Claims = NonNullable<Configuration['claims']>;
type ExtraTokenClaims = NonNullable<Configuration['extraTokenClaims']>;
type Policy = (ctx: KoaContextWithOIDC, client: never, token: never) => Promise<boolean> | boolean;

const STRENGTH_CLAIMS = ['acr', 'amr', 'auth_time'] as const;

function strengthOf(source: Source | undefined): SignInStrength | undefined {
  if (!source) return undefined;
  const out: SignInStrength = {};
  if (typeof source.acr === 'string') out.acr = source.acr;
  if (Array.isArray(source.amr) && source.amr.length > 0) out.amr = [...source.amr];
  if (typeof source.authTime === 'number') out.auth_time = source.authTime;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The sign-in an access token is issued for: the code, device code, CIBA
 * request or refresh token the token endpoint redeems (they keep it; access
 * tokens do not: KNOWN-TRAPS 26), or at the authorization endpoint (implicit
 * and hybrid flows, where the host allows them) the session's. A session's
 * later sign-in does not change what an older grant's tokens say.
 */
function signInBehind(ctx: KoaContextWithOIDC | undefined): SignInStrength | undefined {
  const oidc = ctx?.oidc;
  if (!oidc) return undefined;
  const { entities } = oidc;
  const redeemed = entities.AuthorizationCode ?? entities.DeviceCode ?? entities.BackchannelAuthenticationRequest ?? entities.RefreshToken;
  if (redeemed) return strengthOf(redeemed);
  if (oidc.route === 'authorization' || oidc.route === 'resume') {
    const { session } = oidc;
    return session && strengthOf({ acr: session.acr, amr: session.amr, authTime: session.authTime() });
  }
  return undefined;
}

/**
 * `claims`: the `openid` scope's claims gain acr, amr and auth_time, so every
 * ID token carries those of its sign-in, not only when a site asked
 * (oidc-provider adds auth_time for `max_age` and acr for `acr_values`
 * only, and amr never). UserInfo is unchanged: accounts' claims have none.
 */
export function strengthClaims(host: Configuration['claims']): Claims {
  const openid = host?.openid ?? ['sub'];
  if (Array.isArray(openid)) {
    return { ...host, openid: [...new Set([...(openid as readonly string[]), ...STRENGTH_CLAIMS])] };
  }
  return { ...host, openid: { ...(openid as Record<string, null>), ...Object.fromEntries(STRENGTH_CLAIMS.map((c) => [c, null])) } };
}

/**
 * `extraTokenClaims`: access tokens of a person keep acr, amr and auth_time
 * of the sign-in behind them, which introspection answers as top-level
 * members. The host's own claims, when it has the hook, are asked too and
 * win where both name the same member.
 */
export function strengthTokenClaims(host: ExtraTokenClaims | undefined): ExtraTokenClaims {
  return async (ctx, token) => {
    const own = token.kind === 'AccessToken' ? signInBehind(ctx) : undefined;
    const theirs = host ? await host(ctx, token) : undefined;
    return own || theirs ? { ...own, ...theirs } : undefined;
  };
}

/**
 * Wraps introspection's allowedPolicy: a refresh token it lets through
 * carries acr, amr and auth_time of its sign-in too. oidc-provider answers a
 * token's `extra` as top-level members, and refresh tokens keep the sign-in
 * but no `extra`: this one is for this answer only, never stored.
 */
export function introspectionWithStrength<P extends Policy>(policy: P): P {
  // Not async: an access token (the usual case) gets the policy's own answer, without a promise of the plugin's.
  return ((ctx: KoaContextWithOIDC, client: never, token: never) => {
    const presented = token as { kind?: string; extra?: Record<string, unknown> } & Source;
    if (presented.kind !== 'RefreshToken') return policy(ctx, client, token);
    return Promise.resolve(policy(ctx, client, token)).then((allowed) => {
      if (allowed === true) presented.extra = { ...strengthOf(presented), ...presented.extra };
      return allowed;
    });
  }) as unknown as P;
}
