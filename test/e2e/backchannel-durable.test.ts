/**
 * Back-channel logout that survives (docs/backchannel-logout.md): SIGKILL of
 * the provider right after a sign-out loses no logout token; with
 * `letters.worker: false` the separate worker process delivers the retry;
 * `attempts: 1` is one try. On Redis, and on the Cluster in the Cluster pass.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, forms } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { asHarness, instanceEnv, sharedJwks, startInstance, type Instance } from '../helpers/instance.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { dropPrefix, REDIS_CLUSTER, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';
import { until } from '../helpers/poll.ts';

const SERVICE = 'Sign-in service';

describe(`back-channel logout survives a SIGKILL of the provider right after a sign-out, on ${REDIS_CLUSTER ? 'the Redis Cluster' : 'one Redis'}`, () => {
  let smtp: SmtpSink;
  let receiver: BackchannelReceiver;
  const instances: Instance[] = [];
  const prefix = uniquePrefix('bcl-kill');
  const redis = testRedis();
  let env: Record<string, string>;
  let site: ClientMetadata;

  before(async () => {
    smtp = await startSmtpSink();
    // The first request (the try at the sign-out) gets 503; every later one 200.
    receiver = await startReceiver({ statuses: (n) => (n === 0 ? 503 : 200) });
    site = siteClient('bcl-kill', { client_name: 'Kill Site', backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    env = await instanceEnv(prefix, smtp);
  });
  after(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    await dropPrefix(redis, prefix);
    await redis.quit();
    await smtp.close();
    await receiver.close();
  });

  it('the logout queued before the answer is delivered by the next process, once', async function () {
    this.timeout(60_000);
    const first = await startInstance({ clients: [site], env });
    instances.push(first);
    const issuer = first.url;
    const h = asHarness(first.url, smtp);
    const config = await discover(h, site);
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'bcl-kill@example.com');
    const page = await agent.get(`${first.url}/session/end`);
    const answer = await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' });
    expect(answer.status).to.equal(303);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503]);

    // The next process, as a restarted service (another port; the same issuer, keys, Redis and prefix).
    const second = await startInstance({ clients: [site], issuer, env });
    instances.push(second);
    // The queue's first try comes backchannelLogout.backoffMs (10 s by default) after the sign-out.
    await until('the logout token', () => receiver.accepted.length === 1, 40_000);
    await sleep(500);
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503, 200]);
    const { payload } = await jwtVerify(receiver.accepted[0]!, createRemoteJWKSet(new URL(`${second.url}/jwks`)), { issuer, audience: 'bcl-kill', typ: 'logout+jwt' });
    expect([payload.sub, payload.sid]).to.deep.equal([tokens.claims()!.sub, tokens.claims()!.sid]);
  });
});

describe('back-channel logout retried by the letter worker\'s process (letters.worker: false in the service)', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let worker: ChildProcess | undefined;
  let site: ClientMetadata;
  let jwks: string;

  before(async () => {
    receiver = await startReceiver({ statuses: (n) => (n === 0 ? 503 : 200) });
    // The worker signs logout tokens: it has the service's keys, as a host's worker does.
    jwks = await sharedJwks();
    site = siteClient('bcl-worker', { client_name: 'Worker Site', backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    h = await startHarness('bcl-worker', {
      clients: [site], allowPrivateFetchHosts: ['127.0.0.1'], jwks: JSON.parse(jwks),
      plugin: { letters: { worker: false }, backchannelLogout: { attempts: 3, backoffMs: 100, giveUpAfterMs: 60_000 } },
    });
  });
  after(async () => {
    worker?.kill('SIGKILL');
    await h.close();
    await receiver.close();
  });

  it('the service tries once; the worker process delivers the retry', async function () {
    this.timeout(60_000);
    const agent = new Agent();
    const { tokens } = await signIn(h, await discover(h, site), agent, 'bcl-worker@example.com');
    const page = await agent.get(`${h.issuer}/session/end`);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    await sleep(500);
    // No worker in the service: the logout waits in the queue.
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503]);

    const script = fileURLToPath(new URL('../helpers/letter-worker.ts', import.meta.url));
    worker = spawn(process.execPath, [script], {
      env: { ...process.env, KEY_PREFIX: h.prefix, SMTP_URL: h.smtp.url, ISSUER: h.issuer, CLIENTS: JSON.stringify([site]), JWKS: jwks },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // The worker is a process of its own: its start takes seconds more on a loaded machine.
    await until('the logout token', () => receiver.accepted.length === 1, 40_000);
    await sleep(300);
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503, 200]);
    expect((await receiver.verify(receiver.accepted[0]!, h.issuer, 'bcl-worker')).sid).to.equal(tokens.claims()!.sid);
  });
});

describe('back-channel logout with attempts: 1', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let site: ClientMetadata;

  before(async () => {
    receiver = await startReceiver({ statuses: () => 503 });
    site = siteClient('bcl-once', { client_name: 'Once Site', backchannel_logout_uri: receiver.url });
    h = await startHarness('bcl-once', {
      clients: [site], allowPrivateFetchHosts: ['127.0.0.1'],
      plugin: { backchannelLogout: { attempts: 1, backoffMs: 100, giveUpAfterMs: 60_000 } },
    });
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  it('the one try failing is final: "could not be reached" at once, the notice given, nothing tried again', async () => {
    const email = 'bcl-once@example.com';
    const agent = new Agent();
    await signIn(h, await discover(h, site), agent, email);
    const id = (await h.reference.accounts.findByEmail(email))!.accountId;
    expect(await h.reference.plugin.removeAccess(id, 'bcl-once')).to.equal('removed');
    // Told before removeAccess returned.
    const console = await agent.get(`${h.issuer}/console`);
    expect(console.body).to.include(escapeHtml(t('en', 'logouts.unreachable', { site: 'Once Site' })));
    await h.smtp.waitFor((l) => l.subject === t('en', 'notice.site_unreachable.subject', { serviceName: SERVICE, name: 'Once Site' }));
    await sleep(500);
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503]);
  });
});
