/**
 * Shared Signals on a Redis Cluster: a cause queued while no worker runs is
 * delivered once a worker starts (the queue is in Redis, not in the
 * process), and a receiver that answers 503 twice gets the SET on the third
 * try, exactly once (retried with backoff). Runs in the Cluster pass.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { clusterClient, REDIS_CLUSTER } from '../helpers/redis.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const site = siteClient('ssf-cluster', { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email ssf.manage ssf.read' });

describe('Shared Signals on a Redis Cluster (the Cluster pass)', () => {
  let h: Harness;
  let config: oidc.Configuration;
  let server: Server;
  let url: string;
  /** Answers to give, in order (then 202). */
  const script: number[] = [];
  const tries: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        tries.push(body);
        res.writeHead(script.shift() ?? 202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push`;
    h = await startHarness('ssf-cluster', {
      clients: [site], client: clusterClient(REDIS_CLUSTER!), allowPrivateFetchHosts: ['127.0.0.1'],
      plugin: { letters: { backoffMs: 50, attempts: 5 } },
    });
    config = await discover(h, site);
  });
  after(async () => {
    await h.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const waitFor = async (check: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await check()); i += 1) await new Promise((r) => setTimeout(r, 50));
  };

  it('delivers a cause queued while no worker ran once one starts, and retries a 503 until the SET is taken, once', async () => {
    const { access_token: manage } = await oidc.clientCredentialsGrant(config, { scope: 'ssf.manage' });
    const created = await documentedFetch(`${h.issuer}/ssf/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events_requested: [`${CAEP}/credential-change`], delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: url } }),
    });
    expect(created.status).to.equal(201);
    const { tokens } = await signIn(h, config, new Agent(), 'cluster-ssf@example.com');
    const accountId = (await h.reference.accounts.findByEmail('cluster-ssf@example.com'))!.accountId;

    await h.reference.plugin.stopLetterWorker();
    script.push(503, 503);
    await h.reference.plugin.sharedSignals.credentialChange(accountId, { change: 'passkey_added' });
    expect(await h.reference.plugin.sharedSignals.pending()).to.equal(1);
    expect(tries).to.deep.equal([]);
    h.reference.plugin.startLetterWorker();
    await waitFor(async () => tries.length >= 3 && (await h.reference.plugin.sharedSignals.pending()) === 0);

    expect(tries).to.have.length(3);
    expect(new Set(tries).size).to.equal(1);
    const { payload } = await jwtVerify(tries[0]!, createRemoteJWKSet(new URL(`${h.issuer}/jwks`)), { issuer: h.issuer, audience: 'ssf-cluster', typ: 'secevent+jwt' });
    expect(payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: tokens.claims()!.sub });
    expect(Object.keys(payload.events as object)).to.deep.equal([`${CAEP}/credential-change`]);
    expect(decodeJwt(tries[2]!).jti).to.equal(payload.jti);
  });
});
