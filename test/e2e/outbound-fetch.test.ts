/**
 * `allowPrivateFetchHosts` lifts oidc-provider's guard against special-use
 * addresses for back-channel logout only. A client's jwks_uri on a listed
 * private host is still refused: the provider never fetches it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

describe('outgoing requests to private addresses (allowPrivateFetchHosts)', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let jwksServer: Server;
  const jwksRequests: string[] = [];
  let privateKey: CryptoKey;
  const logoutSite = siteClient('fetch-logout');

  before(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwksServer = createServer((req, res) => {
      jwksRequests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
    receiver = await startReceiver();
    Object.assign(logoutSite, { backchannel_logout_uri: receiver.url });
    const jwtSite: ClientMetadata = {
      client_id: 'fetch-jwt', redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: ['authorization_code'], response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256',
      jwks_uri: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`,
    };
    h = await startHarness('outbound-fetch', { clients: [logoutSite, jwtSite], allowPrivateFetchHosts: ['127.0.0.1'] });
  });
  after(async () => {
    await h.close();
    await receiver.close();
    await new Promise((r) => jwksServer.close(r));
  });

  it('does not fetch a client\'s jwks_uri on a listed private host: private_key_jwt fails with invalid_client', async () => {
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('fetch-jwt').setSubject('fetch-jwt').setAudience(h.issuer)
      .setJti(crypto.randomUUID()).setIssuedAt().setExpirationTime('1m')
      .sign(privateKey);
    const res = await fetch(`${h.issuer}/token/introspection`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: 'anything', client_id: 'fetch-jwt', client_assertion: assertion,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      }),
    });
    expect(res.status).to.equal(401);
    expect((await res.json() as { error: string }).error).to.equal('invalid_client');
    expect(jwksRequests).to.deep.equal([]);
  });

  it('still delivers back-channel logout to the listed host', async () => {
    const config: oidc.Configuration = await discover(h, logoutSite);
    await signIn(h, config, new Agent(), 'fetch@example.com');
    const before = receiver.tokens.length;
    const id = (await h.reference.accounts.findByEmail('fetch@example.com'))!.accountId;
    expect(await h.reference.plugin.blockSite(id, 'fetch-logout')).to.equal('blocked');
    expect(receiver.tokens.length - before).to.equal(1);
  });
});
