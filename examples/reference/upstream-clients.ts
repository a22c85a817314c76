import * as oidc from 'openid-client';

import { UpstreamError, type Upstream, type UpstreamIdentity, type UpstreamState } from './upstreams.ts';

/** How long before `startedAt` an `auth_time` may lie (clock skew between the two services). */
const AUTH_TIME_SKEW_S = 60;
const TIMEOUT_S = 10;

/** http: issuers are for development on loopback only. */
export function loopback(url: URL): boolean {
  return url.hostname === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname) || url.hostname === '[::1]';
}

/**
 * The upstreams as openid-client relying parties of the service: discovery
 * (once, again after a failure), the code flow with PKCE (S256), state and
 * nonce, and the re-authentication the service asks for (`prompt=login`,
 * `max_age=0`, checked through `auth_time`). Requests go to the configured
 * issuers and the endpoints their discovery documents name, nowhere else.
 */
export function createUpstreams(list: Upstream[], issuer: string) {
  const byId = new Map(list.map((u) => [u.id, u]));
  const configs = new Map<string, Promise<oidc.Configuration>>();
  /** The origin of each discovered upstream's authorization endpoint. */
  const endpoints = new Map<string, string>();
  const base = issuer.replace(/\/$/, '');
  const redirectUri = (id: string) => `${base}/upstream/${id}/callback`;

  function configOf(upstream: Upstream): Promise<oidc.Configuration> {
    let config = configs.get(upstream.id);
    if (!config) {
      const url = new URL(upstream.issuer);
      config = oidc.discovery(url, upstream.client_id, { client_secret: upstream.client_secret }, oidc.ClientSecretBasic(upstream.client_secret), {
        timeout: TIMEOUT_S,
        ...(url.protocol === 'http:' && loopback(url) ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      configs.set(upstream.id, config);
      config.then((c) => {
        const endpoint = c.serverMetadata().authorization_endpoint;
        if (endpoint) endpoints.set(upstream.id, new URL(endpoint).origin);
      }, () => {
        // A failed discovery is tried again at the next use.
        if (configs.get(upstream.id) === config) configs.delete(upstream.id);
      });
    }
    return config;
  }

  return {
    list,
    get: (id: string) => byId.get(id),
    redirectUri,

    /** Discovers every upstream now (errors are logged by the caller; a later use tries again). */
    warmUp(onError: (upstream: Upstream, err: Error) => void): void {
      for (const upstream of list) configOf(upstream).catch((err: Error) => onError(upstream, err));
    },

    /**
     * Origins a page's forms may be redirected to (CSP form-action): the
     * issuers, and the authorization endpoints discovered so far (a page
     * never waits for an upstream).
     */
    formTargets(): string[] {
      return [...new Set([...list.map((u) => new URL(u.issuer).origin), ...endpoints.values()])];
    },

    /** Where to send the person, and the state to keep for the answer. */
    async authorizationUrl(upstream: Upstream, extra: { locale: string }): Promise<{ url: URL; state: string; record: Omit<UpstreamState, 'mode'> }> {
      let config: oidc.Configuration;
      try {
        config = await configOf(upstream);
      } catch (err) {
        throw new UpstreamError('unavailable', `discovery: ${(err as Error).message}`);
      }
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri(upstream.id),
        scope: upstream.scope ?? 'openid email profile',
        response_type: 'code',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        // Every sign-in through an upstream proves the person is there now:
        // the service cannot tell a signed-out person's upstream session from theirs.
        prompt: 'login',
        max_age: '0',
        ui_locales: extra.locale,
      });
      return { url, state, record: { upstream: upstream.id, verifier, nonce, startedAt: Date.now() } };
    },

    /**
     * The upstream's answer (the query at the redirect URI) as an identity:
     * the upstream's own error, a code that does not redeem, an ID token that
     * fails openid-client's checks (issuer, audience, signature, nonce,
     * state, PKCE) or an `auth_time` before the person was sent each throw an
     * UpstreamError. Claims missing from the ID token come from UserInfo.
     */
    async identity(upstream: Upstream, record: UpstreamState, query: URLSearchParams, state: string): Promise<UpstreamIdentity> {
      const error = query.get('error');
      if (error !== null) throw new UpstreamError(error === 'access_denied' ? 'denied' : 'failed', `upstream error ${/^[\w.-]{1,64}$/.test(error) ? error : '(unreadable)'}`);
      let config: oidc.Configuration;
      try {
        config = await configOf(upstream);
      } catch (err) {
        throw new UpstreamError('unavailable', `discovery: ${(err as Error).message}`);
      }
      const current = new URL(redirectUri(upstream.id));
      current.search = query.toString();
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: record.verifier,
          expectedState: state,
          expectedNonce: record.nonce,
          idTokenExpected: true,
          // auth_time no earlier than the moment the person was sent (max_age=0 asked for it).
          maxAge: Math.ceil((Date.now() - record.startedAt) / 1000) + AUTH_TIME_SKEW_S,
        });
      } catch (err) {
        const reason = (err as { code?: string; error?: string }).error ?? (err as { code?: string }).code ?? 'error';
        // openid-client wraps the check that failed (its cause says which).
        const said = `${(err as Error).message} ${((err as Error).cause as Error | undefined)?.message ?? ''}`;
        const reauth = /auth_time|authentication time|elapsed since the last End-User authentication/i.test(said);
        throw new UpstreamError(reauth ? 'reauth' : 'failed', `token exchange: ${reason}`);
      }
      const claims = tokens.claims()!;
      if (typeof claims.auth_time !== 'number' || claims.auth_time < record.startedAt / 1000 - AUTH_TIME_SKEW_S) {
        throw new UpstreamError('reauth', 'the upstream did not authenticate the person again');
      }
      let info: Record<string, unknown> = claims;
      // The address comes with the email_verified of its own source: an ID
      // token's `email_verified: true` vouches for no address UserInfo gives.
      let address: Record<string, unknown> = claims;
      if (claims.email === undefined && tokens.access_token) {
        try {
          address = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        } catch (err) {
          throw new UpstreamError('failed', `userinfo: ${(err as { code?: string }).code ?? 'error'}`);
        }
        info = { ...address, ...claims };
      }
      const { email } = address;
      const verifiedEmail = address.email_verified === true && typeof email === 'string' && email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email) ? email : undefined;
      const name = typeof info.name === 'string' ? info.name : typeof info.preferred_username === 'string' ? info.preferred_username : undefined;
      return {
        sub: claims.sub,
        ...(verifiedEmail ? { verifiedEmail } : {}),
        ...(name ? { name: name.slice(0, 100) } : {}),
        ...(claims.amr !== undefined ? { amr: claims.amr } : {}),
      };
    },
  };
}

export type Upstreams = ReturnType<typeof createUpstreams>;
