/**
 * A Shared Signals push survives (docs/shared-signals.md "The way of a SET"):
 * the sign-out's event is stored before its answer, so a SIGKILL of the
 * provider right after the answer loses nothing; the next process (the same
 * issuer, keys, Redis and prefix) delivers the SET, once. On Redis, and on
 * the Cluster in the Cluster pass. The back-channel logout's twin:
 * backchannel-durable.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent, forms } from '../helpers/agent.ts';
import { until } from '../helpers/poll.ts';
import { asHarness, instanceEnv, startInstance, type Instance } from '../helpers/instance.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, signIn, siteClient } from '../helpers/reference.ts';
import { dropPrefix, REDIS_CLUSTER, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';
import { startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';

describe(`a Shared Signals push survives a SIGKILL of the provider right after a sign-out, on ${REDIS_CLUSTER ? 'the Redis Cluster' : 'one Redis'}`, () => {
  let smtp: SmtpSink;
  let receiver: SsfReceiver;
  const instances: Instance[] = [];
  const prefix = uniquePrefix('ssf-kill');
  const redis = testRedis();
  let env: Record<string, string>;
  const site: ClientMetadata = siteClient('ssf-kill', {
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email ssf.manage ssf.read',
  });

  before(async () => {
    smtp = await startSmtpSink();
    // The first push (if the killed process got to it) is answered 503; every later one 202.
    receiver = await startSsfReceiver('/ssf/push', (n) => (n === 0 ? 503 : 202));
    env = await instanceEnv(prefix, smtp);
  });
  after(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    await dropPrefix(redis, prefix);
    await redis.quit();
    await smtp.close();
    await receiver.close();
  });

  it('the event stored before the sign-out\'s answer is pushed by the next process, once', async function () {
    this.timeout(210_000);
    const first = await startInstance({ clients: [site], env });
    instances.push(first);
    const issuer = first.url;
    const h = asHarness(first.url, smtp);
    const config = await discover(h, site);
    const { access_token: manage } = await oidc.clientCredentialsGrant(config, { scope: 'ssf.manage' });
    const created = await documentedFetch(`${issuer}/ssf/stream`, {
      method: 'POST', headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events_requested: [`${CAEP}/session-revoked`], delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url } }),
    });
    expect(created.status).to.equal(201);
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'ssf-kill@example.com');
    const page = await agent.get(`${issuer}/session/end`);
    const answer = await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' });
    expect(answer.status).to.equal(303);
    // Killed at once: the worker may or may not have fanned the event out or tried the push.
    first.child.kill('SIGKILL');
    await first.exited;
    const triedBefore = receiver.pushed.length;
    expect(triedBefore).to.be.at.most(1);

    // The next process, as a restarted service (another port; the same issuer, keys, Redis and prefix).
    const second = await startInstance({ clients: [site], issuer, env });
    instances.push(second);
    // A retry comes letters.backoffMs (30 s by default) after the 503.
    // A worker that died holding the job leaves it to the next after the lock (letters.stalledIntervalMs, 30 s by default),
    // found by the next stalled check (as long again): with a 503 first, up to about 100 s after the restart.
    await until('the SET taken', () => receiver.pushed.some((p) => p.status === 202), 170_000);
    await sleep(500);
    expect(receiver.pushed.map((p) => p.status)).to.deep.equal([503, 202]);
    // One SET: the same one each time (the receiver keeps one per jti).
    expect(new Set(receiver.pushed.map((p) => p.set)).size).to.equal(1);
    // The issuer's keys, read where the second process listens (the issuer's own port went with the first).
    const metadata = await (await documentedFetch(`${second.url}/.well-known/ssf-configuration`)).json() as SsfMetadata;
    metadata.jwks_uri = metadata.jwks_uri.replace(issuer, second.url);
    const set = await verifySet(receiver.pushed[0]!.set, metadata, 'ssf-kill');
    expect(set.type).to.equal(`${CAEP}/session-revoked`);
    expect(set.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: issuer, sub: tokens.claims()!.sub });
    expect(set.event).to.deep.include({ initiating_entity: 'user' });
  });
});
