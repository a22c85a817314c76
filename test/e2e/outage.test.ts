import { expect } from 'chai';
import { Redis } from 'ioredis';

import { startLoad, unexpected, UNLIMITED } from '../helpers/load.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { UNAVAILABLE_EVENT, type UnavailableEvent } from '../../src/index.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';

const site = siteClient('outage-site', { client_uri: 'https://shop.example' });
const BOUND = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Redis stopped under load (a redis-server of the test’s own, killed and restarted)', () => {
  let redis: OwnedRedis;
  let h: Harness;
  const warnings: string[] = [];

  before(async () => {
    // Every acknowledged write is on disk: what the restart brings back is what Redis answered.
    redis = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always']);
    const client = new Redis(redis.url, { retryStrategy: () => 100 });
    client.on('error', () => {});
    h = await startHarness('outage', {
      clients: [site],
      client,
      logger: { info() {}, warn: (m: string) => warnings.push(m), error() {} },
      plugin: { redisTimeoutMs: BOUND, letters: { backoffMs: 100 }, notify: UNLIMITED },
    });
  });
  after(async () => {
    await redis.start().catch(() => {});
    await h.close();
    await redis.close();
  });

  it('answers every request during the outage 503 temporarily_unavailable with Retry-After within the bound, hangs none, and every refresh chain in use works afterwards', async function () {
    this.timeout(60_000);
    const told: UnavailableEvent[] = [];
    const offUnavailable = h.reference.plugin.on(UNAVAILABLE_EVENT, (e) => told.push(e));
    const load = await startLoad(h, site, ['out1@example.com', 'out2@example.com', 'out3@example.com']);
    await sleep(800);
    const killedAt = load.now();
    await redis.kill('SIGKILL');
    await sleep(1500);
    // A person's browser meets the outage too: a page in their language.
    const page = await load.chains[0]!.agent.request('GET', `${h.issuer}/console`, undefined, { 'accept-language': 'de' });
    // A site sends the person to sign in: the site is told (RFC 6749 section 4.1.2.1).
    const authorize = await load.chains[0]!.agent.get(`${h.issuer}/auth?${new URLSearchParams({
      client_id: site.client_id, response_type: 'code', scope: 'openid', redirect_uri: site.redirect_uris![0]!, state: 'st-out',
      code_challenge: 'x'.repeat(43), code_challenge_method: 'S256',
    })}`);
    await sleep(1500);
    const restartedAt = load.now();
    await redis.start();
    await sleep(2500);
    await load.stop();
    const { answers } = load;

    expect(unexpected(answers)).to.deep.equal([]);
    const unavailable = answers.filter((a) => a.status === 503);
    console.log(`      outage: Redis killed at ${killedAt} ms, restarted at ${restartedAt} ms; ${answers.length} answers, ${unavailable.length} of them 503, slowest ${Math.max(...answers.map((a) => a.ms))} ms, ${load.chains.map((c) => c.refreshes).join('/')} refreshes per chain`);
    expect(unavailable.length).to.be.above(10);
    for (const a of unavailable) {
      expect(a.retryAfter).to.equal('2');
      expect(a.json).to.deep.equal({ error: 'temporarily_unavailable', error_description: 'the service cannot reach its data store right now; try again shortly' });
    }
    expect(Math.max(...answers.map((a) => a.ms)), 'slowest answer (ms)').to.be.below(BOUND + 700);
    // While Redis was down, nothing succeeded.
    const during = answers.filter((a) => a.at > killedAt + BOUND + 100 && a.at + a.ms < restartedAt);
    expect(during.length).to.be.above(5);
    expect(during.every((a) => a.status === 503)).to.equal(true);
    // And afterwards everything did again.
    expect(answers.filter((a) => a.at > restartedAt + 1500).every((a) => a.status !== 503)).to.equal(true);

    // Each 503 told the host (plugin.on), with the route and what failed, and no data.
    offUnavailable();
    expect(told.length).to.be.at.least(unavailable.length);
    expect(told.some((e) => e.method === 'GET' && e.path === '/console')).to.equal(true);
    for (const e of told) expect(Object.keys(e).sort()).to.deep.equal(['method', 'path', 'reason']);

    expect(page.status).to.equal(503);
    expect(page.headers.get('retry-after')).to.equal('2');
    expect(page.body).to.include('Vorübergehend nicht verfügbar');
    expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(authorize.status).to.equal(303);
    expect(Object.fromEntries(new URL(authorize.location!).searchParams)).to.include({ error: 'temporarily_unavailable', state: 'st-out' });

    // Every chain in use still works, and nothing looked like theft.
    for (const chain of load.chains) {
      const r = await load.refresh(chain);
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      expect((await load.introspect(chain.access)).json).to.include({ active: true });
      expect(chain.refreshes).to.be.above(2);
    }
    expect(warnings.filter((w) => /reuse detected/.test(w))).to.deep.equal([]);
  });
});
