import { connect } from 'node:net';

import { expect } from 'chai';
import { Redis } from 'ioredis';
import * as oidc from 'openid-client';

import { READY_MAX_AGE_MS } from '../../examples/reference/operations.ts';
import { redisReconnect } from '../../src/index.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { asHarness, startInstance, type Instance } from '../helpers/instance.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, oauthError, signIn, siteClient } from '../helpers/reference.ts';
import { dropPrefix, uniquePrefix } from '../helpers/redis.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../helpers/smtp.ts';

const site = siteClient('ops-site', { client_uri: 'https://shop.example' });
const BASIC = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A metric's value from the Prometheus text format (the sum over samples whose labels include `labels`). */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

const canConnect = (port: number) => new Promise<boolean>((resolve) => {
  const socket = connect({ host: '127.0.0.1', port });
  socket.once('connect', () => { socket.destroy(); resolve(true); });
  socket.once('error', () => resolve(false));
});

describe('operators’ surface of the reference provider (node examples/start.ts)', () => {
  let redis: OwnedRedis;
  let client: Redis;
  let smtp: SmtpSink;
  const smtpOptions: SmtpSinkOptions = {};
  let instance: Instance;
  const prefix = uniquePrefix('ops');

  before(async function () {
    this.timeout(30_000);
    redis = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always']);
    // The test's own client reconnects as the package advises hosts to (the instance's is built from REDIS_URL).
    client = new Redis(redis.url, redisReconnect);
    client.on('error', () => {});
    smtp = await startSmtpSink(smtpOptions);
    instance = await startInstance({
      clients: [site],
      env: { REDIS_URL: redis.url, KEY_PREFIX: prefix, SMTP_URL: smtp.url, REDIS_TIMEOUT_MS: '800', SHUTDOWN_TIMEOUT_MS: '8000' },
    });
  });
  after(async () => {
    await instance?.stop();
    await redis.start().catch(() => {});
    await dropPrefix(client, prefix);
    client.disconnect();
    await smtp.close();
    await redis.close();
  });

  const scrape = async () => (await fetch(`http://127.0.0.1:${instance.metricsPort}/metrics`)).text();

  it('/healthz says the process is up, /readyz that Redis and the queue answer; /metrics is served on its own listener only', async () => {
    const health = await fetch(`${instance.url}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.equal({ status: 'ok' });
    const ready = await fetch(`${instance.url}/readyz`);
    expect(ready.status).to.equal(200);
    expect(ready.headers.get('cache-control')).to.equal('no-store');
    expect(await ready.json()).to.deep.equal({ status: 'ready', checks: { redis: 'ok', queue: 'ok' } });
    expect((await fetch(`${instance.url}/metrics`)).status).to.equal(404);
    const metrics = await fetch(`http://127.0.0.1:${instance.metricsPort}/metrics`);
    expect(metrics.status).to.equal(200);
    expect(metrics.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    expect(await metrics.text()).to.include('# TYPE osn_http_request_duration_seconds histogram');
  });

  it('counts requests by route and status with latencies, notify outcomes, letters, the queue depth and reuse detections', async function () {
    this.timeout(30_000);
    const h = asHarness(instance.url, smtp);
    const config = await discover(h, site);
    const { tokens } = await signIn(h, config, new Agent(), 'ops1@example.com');
    const second = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    // The answer lost: the same refresh again, within the leeway, gets it again.
    expect((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).refresh_token).to.equal(second.refresh_token);
    await oidc.refreshTokenGrant(config, second.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    const notify = (category: string) => documentedFetch(`${instance.url}/api/notify`, {
      method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ sub: tokens.claims()!.sub, category, title: 'Shipped', body: 'Today.' }),
    });
    expect((await notify('transactional')).status).to.equal(202);
    expect((await notify('product')).status).to.equal(202);
    expect((await notify('promotions')).status).to.equal(202);
    await smtp.waitFor((l) => l.subject === 'Shipped');
    // The reuse above told the person too (docs/security.md "Told when a sign-in was stolen".
    await smtp.waitFor((l) => /was signed out of your/.test(l.subject ?? ''));
    await sleep(200);

    const text = await scrape();
    expect(metric(text, 'osn_http_requests_total', { route: 'token', method: 'POST', status: '200' })).to.equal(4);
    expect(metric(text, 'osn_http_requests_total', { route: 'token', method: 'POST', status: '400' })).to.equal(1);
    expect(metric(text, 'osn_http_requests_total', { route: '/api/notify', status: '202' })).to.equal(3);
    expect(metric(text, 'osn_http_request_duration_seconds_count', { route: 'token', status: '200' })).to.equal(4);
    expect(metric(text, 'osn_http_request_duration_seconds_bucket', { route: 'token', status: '200', le: '+Inf' })).to.equal(4);
    expect(metric(text, 'osn_notifications_total', { result: 'email' })).to.equal(1);
    expect(metric(text, 'osn_notifications_total', { result: 'in_app' })).to.equal(1);
    expect(metric(text, 'osn_notifications_total', { result: 'category_off' })).to.equal(1);
    // The notification and the theft notice.
    expect(metric(text, 'osn_letters_total', { outcome: 'sent' })).to.equal(2);
    expect(metric(text, 'osn_letter_queue_depth')).to.equal(0);
    expect(metric(text, 'osn_refresh_reuse_detected_total', { model: 'RefreshToken' })).to.equal(1);
    expect(metric(text, 'osn_refresh_replayed_total', { client: site.client_id })).to.equal(1);
    expect(text).to.not.include(tokens.refresh_token!);
  });

  it('readiness answers 503 within the bound while Redis is down (health stays 200), and ready again once it is back; Redis errors are counted', async function () {
    this.timeout(30_000);
    // No answer of an earlier check is left to give.
    await sleep(READY_MAX_AGE_MS);
    await redis.kill('SIGKILL');
    const started = Date.now();
    const ready = await fetch(`${instance.url}/readyz`);
    expect(Date.now() - started).to.be.below(1500);
    expect(ready.status).to.equal(503);
    expect(await ready.json()).to.deep.equal({ status: 'unavailable', checks: { redis: 'failed', queue: 'failed' } });
    expect((await fetch(`${instance.url}/healthz`)).status).to.equal(200);
    const down = await fetch(`${instance.url}/token/introspection`, {
      method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=abc',
    });
    expect(down.status).to.equal(503);
    let text = await scrape();
    // The client reports its failed reconnects as they happen.
    for (let i = 0; i < 30 && metric(text, 'osn_redis_errors_total') === 0; i += 1) {
      await sleep(100);
      text = await scrape();
    }
    expect(metric(text, 'osn_redis_errors_total')).to.be.above(0);
    expect(metric(text, 'osn_redis_unavailable_total')).to.be.above(0);
    expect(metric(text, 'osn_http_requests_total', { route: 'introspection', status: '503' })).to.equal(1);
    await redis.start();
    let again = 0;
    for (let i = 0; i < 50 && again !== 200; i += 1) {
      await sleep(100);
      again = (await fetch(`${instance.url}/readyz`)).status;
    }
    expect(again).to.equal(200);
  });

  it('/readyz checks once for many hits at once, and again once that answer is older than READY_MAX_AGE_MS', async function () {
    this.timeout(30_000);
    // Every readiness check reads this key: the owned Redis's MONITOR counts the checks.
    const monitor = await client.monitor();
    const reads: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'get' && (args[1] === `${prefix}readyz` || args[1] === 'readyz-test-marker')) reads.push(args[1]);
    });
    /** The checks so far: a marker read after them shows that MONITOR has passed them all on. */
    const checks = async () => {
      await client.get('readyz-test-marker');
      for (let i = 0; i < 100 && !reads.includes('readyz-test-marker'); i += 1) await sleep(20);
      const count = reads.filter((k) => k !== 'readyz-test-marker').length;
      reads.splice(0, reads.length, ...reads.filter((k) => k !== 'readyz-test-marker'));
      return count;
    };
    try {
      await sleep(READY_MAX_AGE_MS);
      const answers = await Promise.all(Array.from({ length: 40 }, async () => {
        const res = await fetch(`${instance.url}/readyz`);
        return [res.status, await res.json()];
      }));
      expect(answers).to.deep.equal(Array.from({ length: 40 }, () => [200, { status: 'ready', checks: { redis: 'ok', queue: 'ok' } }]));
      expect(await checks()).to.equal(1);
      await sleep(READY_MAX_AGE_MS);
      expect((await fetch(`${instance.url}/readyz`)).status).to.equal(200);
      expect(await checks()).to.equal(2);
    } finally {
      monitor.disconnect();
    }
  });

  it('SIGTERM: no new connection, the request in flight and the letter in hand are finished, Redis is closed, exit 0 within the bound', async function () {
    this.timeout(30_000);
    const h = asHarness(instance.url, smtp);
    const config = await discover(h, site);
    const { tokens } = await signIn(h, config, new Agent(), 'ops2@example.com');
    // Every letter now takes 1.5 s at the mail server.
    smtpOptions.delayMs = 1500;
    const before = smtp.letters.length;
    const queued = await documentedFetch(`${instance.url}/api/notify`, {
      method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ sub: tokens.claims()!.sub, category: 'transactional', title: 'In hand', body: 'Being sent.' }),
    });
    expect(await queued.json()).to.deep.include({ email: true });
    // A person asks for a sign-in code: that request waits for its letter too.
    const agent = new Agent();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: site.redirect_uris![0]!, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const login = await agent.follow(await agent.get(url.href));
    const inFlight = agent.submit(login, formFor(login.body, '/email'), { email: 'ops3@example.com' });
    await sleep(300);

    const signalled = Date.now();
    instance.child.kill('SIGTERM');
    await sleep(300);
    expect(await canConnect(instance.port), 'new connections').to.equal(false);
    const answered = await inFlight;
    expect(answered.status).to.be.within(200, 399);
    const code = await instance.exited;
    expect(code).to.equal(0);
    expect(Date.now() - signalled).to.be.below(8000);
    const subjects = smtp.letters.slice(before).map((l) => l.subject);
    expect(subjects).to.include('In hand');
    expect(subjects.filter((s) => s === 'In hand')).to.have.length(1);
    expect(smtp.abandoned).to.equal(0);
    expect(instance.output()).to.match(/"message":"shut down"/);
    const clients = await client.client('LIST') as string;
    expect(clients.split('\n').filter(Boolean)).to.have.length(1);
  });
});
