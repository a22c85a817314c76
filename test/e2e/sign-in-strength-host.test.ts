/**
 * A host of its own (not the reference provider) gets the sign-in's acr, amr
 * and auth_time through to ID tokens and introspection with no code of its
 * own: its interaction finishes with `login: { acr, amr }`, and the plugin's
 * configuration carries them; the host's own `claims` and `extraTokenClaims`
 * are kept. openid-client is the site.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { Server } from 'node:http';

import { expect } from 'chai';
import Provider from 'oidc-provider';
import type { JWK } from 'oidc-provider';
import * as oidc from 'openid-client';

import { createSignoutNotify, type SignoutNotify } from '../../src/index.ts';
import { Agent } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { RP, siteClient } from '../helpers/reference.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';

const CLIENT = siteClient('strength-host-site');
const REDIRECT = CLIENT.redirect_uris![0]!;
const silent = { info() {}, warn() {}, error() {} };

describe('a host\'s own interaction: its login acr and amr reach ID tokens and introspection', function () {
  this.timeout(30_000);

  const redis = testRedis();
  const prefix = uniquePrefix('strength-host');
  let plugin: SignoutNotify;
  let server: Server;
  let config: oidc.Configuration;

  before(async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    plugin = createSignoutNotify({ redis, keyPrefix: prefix, contacts: async () => undefined, logger: silent });
    const key = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' } as JWK;
    const provider = new Provider(issuer, plugin.configure({
      clients: [CLIENT],
      jwks: { keys: [key] },
      cookies: { keys: ['strength-host-cookie-key-0123'] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, RefreshToken: 3600, IdToken: 600, AuthorizationCode: 60 },
      findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, name: 'Hal Host' }) }),
      claims: { openid: ['sub'], profile: ['name'] },
      scopes: ['openid', 'profile', 'offline_access'],
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      extraTokenClaims: async () => ({ tenant: 'acme' }),
    }));
    // The host's sign-in: no page, the person is Hal, signed in with a password and a one-time code.
    provider.use(async (ctx, next) => {
      if (!/^\/interaction\/[\w-]+$/.test(ctx.path)) return next();
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const grant = new provider.Grant({ accountId: 'hal', clientId: CLIENT.client_id });
      grant.addOIDCScope(String(details.params.scope));
      await provider.interactionFinished(ctx.req, ctx.res, {
        login: { accountId: 'hal', acr: 'urn:host:silver', amr: ['pwd', 'otp'] },
        consent: { grantId: await grant.save() },
      }, { mergeWithLastSubmission: false });
      return undefined;
    });
    plugin.attach(provider);
    server = provider.listen(port, '127.0.0.1') as unknown as Server;
    await new Promise((r) => server.once('listening', r));
    config = await oidc.discovery(new URL(issuer), CLIENT.client_id, { client_secret: CLIENT.client_secret }, oidc.ClientSecretBasic(CLIENT.client_secret!), { execute: [oidc.allowInsecureRequests] });
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await plugin?.close();
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it('answers them in the ID token, the access token\'s introspection (beside the host\'s own extra claim) and the refresh token\'s', async () => {
    const agent = new Agent();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const from = Math.floor(Date.now() / 1000);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT, scope: 'openid profile offline_access', state, prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(RP));
    expect(res.location, res.body.slice(0, 500)).to.satisfy((u: string) => u.startsWith(REDIRECT));
    const tokens = await oidc.authorizationCodeGrant(config, new URL(res.location!), { pkceCodeVerifier: verifier, expectedState: state });

    const claims = tokens.claims()!;
    expect(claims).to.include({ sub: 'hal', name: 'Hal Host', acr: 'urn:host:silver' });
    expect(claims.amr).to.deep.equal(['pwd', 'otp']);
    expect(claims.auth_time).to.be.a('number').within(from, Math.floor(Date.now() / 1000));
    const signedIn = { acr: 'urn:host:silver', amr: ['pwd', 'otp'], auth_time: claims.auth_time };

    const access = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(access).to.deep.include({ active: true, sub: 'hal', tenant: 'acme', ...signedIn });
    const refresh = await oidc.tokenIntrospection(config, tokens.refresh_token!);
    expect(refresh).to.deep.include({ active: true, sub: 'hal', ...signedIn });
    expect(refresh).to.not.have.property('tenant');

    expect(config.serverMetadata().claims_supported).to.include.members(['sub', 'name', 'acr', 'amr', 'auth_time']);
  });
});
