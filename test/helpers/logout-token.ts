import { expect } from 'chai';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet, type JWTPayload } from 'jose';

import type { Harness } from './reference.ts';

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * The conformance suite's checks of a logout token (OpenID Back-Channel
 * Logout 1.0 section 2.4), in its order: ValidateLogoutTokenSignature (the
 * provider's JWKS, found through discovery), ValidateLogoutTokenClaims,
 * CheckIdTokenSubMatchesLogoutToken and CheckIdTokenSidMatchesLogoutToken
 * (each when the token has the claim), CheckLogoutTokenNoNonce,
 * CheckLogoutTokenHasSubOrSid. `idToken`: the claims of the ID token the
 * site got at sign-in. Returns the token's claims.
 */
export async function expectSuiteValidLogoutToken(h: Harness, token: string, clientId: string, idToken: JWTPayload): Promise<JWTPayload> {
  const fetch = h.tls!.fetch;
  const { jwks_uri: jwksUri } = await (await fetch(`${h.issuer}/.well-known/openid-configuration`)).json() as { jwks_uri: string };
  const jwks = await (await fetch(jwksUri)).json() as JSONWebKeySet;
  const { payload } = await compactVerify(token, createLocalJWKSet(jwks));
  const claims = JSON.parse(new TextDecoder().decode(payload)) as JWTPayload & Record<string, unknown>;

  expect(claims.iss, "'iss' claim: Issuer mismatch").to.equal(h.issuer);
  if (Array.isArray(claims.aud)) expect(claims.aud, "'aud' array does not contain our client id").to.include(clientId);
  else expect(claims.aud, "'aud' is not our client id").to.equal(clientId);
  const now = Date.now() / 1000;
  expect(claims.iat, "'iat' claim").to.be.a('number');
  expect(claims.iat!, "Token 'iat' in the future").to.be.at.most(now + 5 * 60);
  expect(claims.iat!, "'iat' is more than 1 day in the past").to.be.at.least(now - 24 * 60 * 60);
  expect(claims.jti, 'jti').to.be.a('string');
  const events = claims.events as Record<string, unknown> | undefined;
  expect(events, "'events' claim is a json object").to.be.an('object');
  expect(Object.keys(events!), "'events' object contains exactly 1 entry, the back-channel logout event").to.deep.equal([BACKCHANNEL_LOGOUT_EVENT]);
  expect(events![BACKCHANNEL_LOGOUT_EVENT], `${BACKCHANNEL_LOGOUT_EVENT} is an empty json object`).to.deep.equal({});

  if (claims.sub !== undefined) expect(claims.sub, 'the id_token and the logout_token contain the same sub').to.equal(idToken.sub);
  if (claims.sid !== undefined) expect(claims.sid, 'the id_token and the logout_token contain the same sid').to.equal(idToken.sid);
  expect(claims, 'Logout token has a nonce, which it must not.').to.not.have.property('nonce');
  expect(claims.sub ?? claims.sid, 'logout token has neither sub nor sid').to.be.a('string');
  return claims;
}
