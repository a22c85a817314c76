/**
 * The reuse leeway for public sites (docs/reuse-leeway.md "Refresh that survives a lost
 * answer"): off by default; with `publicClientLeeway: true`, for refresh
 * tokens bound to a DPoP key only, and only for a retry that proves that key
 * with a fresh proof. openid-client as the public site (PKCE, DPoP).
 */
import { randomUUID } from 'node:crypto';

import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { RP, siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { REFRESH_REPLAYED_EVENT, REPLAY_EVENT, type AnswerAgainEvent, type ReplayEvent } from '../../src/index.ts';

const { client_secret: _secret, ...app } = siteClient('dpop-app', { token_endpoint_auth_method: 'none' });
const publicApp: ClientMetadata = app;

interface Key { privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK }

async function newKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicKey, jwk: await exportJWK(publicKey) };
}

/** A DPoP proof (RFC 9449 section 4.2) for the token endpoint. */
function proof(key: Key, htu: string, jti = randomUUID()): Promise<string> {
  return new SignJWT({ htm: 'POST', htu, jti })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk })
    .setIssuedAt()
    .sign(key.privateKey);
}

// Off: the option left out, as a host that never heard of it leaves it (the default is what a site without DPoP gets).
for (const publicClientLeeway of [true, undefined]) describe(`a public site's DPoP-bound refresh token, publicClientLeeway ${publicClientLeeway ?? 'left out (false)'}`, () => {
  let h: Harness;
  let config: oidc.Configuration;
  let tokenEndpoint: string;
  const replays: ReplayEvent[] = [];
  const again: AnswerAgainEvent[] = [];

  before(async () => {
    h = await startHarness(`dpop-${publicClientLeeway ?? 'default'}`, { clients: [publicApp], plugin: { refreshReuseLeeway: 30, ...(publicClientLeeway === undefined ? {} : { publicClientLeeway }) } });
    h.reference.plugin.on(REPLAY_EVENT, (e) => replays.push(e));
    h.reference.plugin.on(REFRESH_REPLAYED_EVENT, (e) => again.push(e));
    config = await oidc.discovery(new URL(h.issuer), publicApp.client_id, { token_endpoint_auth_method: 'none' }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    tokenEndpoint = config.serverMetadata().token_endpoint!;
  });
  after(() => h.close());

  /** The code flow with PKCE, the code redeemed with a DPoP proof of `key`: the refresh token is bound to it (none: a bearer token). */
  async function signInWith(key: Key | undefined, email: string) {
    const verifier = oidc.randomPKCECodeVerifier();
    const redirectUri = `${RP}/${publicApp.client_id}/callback`;
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's' });
    const agent = new Agent();
    const { res } = await throughSignInPages(h, agent, await agent.get(url.href), (u) => u.startsWith(redirectUri), email);
    const DPoP = key && oidc.getDPoPHandle(config, { privateKey: key.privateKey, publicKey: key.publicKey });
    return oidc.authorizationCodeGrant(config, new URL(res.location!), { pkceCodeVerifier: verifier, expectedState: 's' }, undefined, DPoP ? { DPoP } : undefined);
  }

  /** A refresh as the app sends it, with the DPoP proof given (or none). */
  async function refresh(refreshToken: string, dpop?: string) {
    const res = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop } : {}) },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: publicApp.client_id }),
    });
    return { status: res.status, json: await res.json() as Record<string, string> };
  }

  it('is bound to the key: a refresh without a proof of it is refused', async () => {
    const key = await newKey();
    const tokens = await signInWith(key, `dpop-bound-${publicClientLeeway}@example.com`);
    expect(tokens.token_type.toLowerCase()).to.equal('dpop');
    expect((await refresh(tokens.refresh_token!)).json.error).to.equal('invalid_grant');
    expect((await refresh(tokens.refresh_token!, await proof(await newKey(), tokenEndpoint))).json.error).to.equal('invalid_grant');
    expect((await refresh(tokens.refresh_token!, await proof(key, tokenEndpoint))).status, 'the chain is intact').to.equal(200);
  });

  it(publicClientLeeway
    ? 'the rotated token again, with a fresh proof of the key, within the leeway: the same answer again, told as refresh_replayed'
    : 'the rotated token again, even with a fresh proof of the key: theft (no leeway for public sites)', async () => {
    const key = await newKey();
    const tokens = await signInWith(key, `dpop-again-${publicClientLeeway}@example.com`);
    const first = await refresh(tokens.refresh_token!, await proof(key, tokenEndpoint));
    expect(first.status).to.equal(200);
    const [told, reported] = [again.length, replays.length];
    const retried = await refresh(tokens.refresh_token!, await proof(key, tokenEndpoint));
    if (publicClientLeeway) {
      expect(retried.status).to.equal(200);
      expect(retried.json).to.deep.equal(first.json);
      expect(again.length - told).to.equal(1);
      expect(replays.length - reported).to.equal(0);
      expect((await refresh(first.json.refresh_token!, await proof(key, tokenEndpoint))).status, 'the chain goes on').to.equal(200);
    } else {
      expect({ status: retried.status, error: retried.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
      expect(replays.length - reported).to.equal(1);
      expect((await refresh(first.json.refresh_token!, await proof(key, tokenEndpoint))).json.error, 'the chain is dead').to.equal('invalid_grant');
    }
  });

  it('the rotated token again without the key (a thief with the token alone): invalid_grant, no answer, and the chain is left to its holder', async () => {
    const key = await newKey();
    const tokens = await signInWith(key, `dpop-thief-${publicClientLeeway}@example.com`);
    const first = await refresh(tokens.refresh_token!, await proof(key, tokenEndpoint));
    for (const stolen of [undefined, await proof(await newKey(), tokenEndpoint)]) {
      const tried = await refresh(tokens.refresh_token!, stolen);
      expect({ status: tried.status, error: tried.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
      expect(tried.json).to.not.have.property('access_token');
    }
    expect((await refresh(first.json.refresh_token!, await proof(key, tokenEndpoint))).status).to.equal(200);
  });

  it('a refresh token bound to no key (the site used no DPoP): its reuse is theft, leeway or not', async () => {
    const tokens = await signInWith(undefined, `dpop-none-${publicClientLeeway}@example.com`);
    expect(tokens.token_type.toLowerCase()).to.equal('bearer');
    const first = await refresh(tokens.refresh_token!);
    expect(first.status).to.equal(200);
    const reported = replays.length;
    const retried = await refresh(tokens.refresh_token!);
    expect({ status: retried.status, error: retried.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(replays.length - reported).to.equal(1);
    expect((await refresh(first.json.refresh_token!)).json.error, 'the chain is dead').to.equal('invalid_grant');
  });

  if (publicClientLeeway) {
    it('a proof used once is not accepted again for the leeway (its jti is recorded)', async () => {
      const key = await newKey();
      const tokens = await signInWith(key, 'dpop-jti@example.com');
      const first = await refresh(tokens.refresh_token!, await proof(key, tokenEndpoint));
      const used = await proof(key, tokenEndpoint);
      expect((await refresh(tokens.refresh_token!, used)).json).to.deep.equal(first.json);
      const replayed = await refresh(tokens.refresh_token!, used);
      expect({ status: replayed.status, error: replayed.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    });
  }
});
