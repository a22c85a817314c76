import { expect } from 'chai';

import { redisFromUrl } from '../../examples/reference/settings.ts';
import type { Response } from '../helpers/agent.ts';
import { BACK_WITHIN, expectFaultSurvived, FAULT_BOUND, lettersInHand, lettersThrough, servedAgain, startFaultHarness, startLoad, type Load } from '../helpers/load.ts';
import { siteClient, type Harness } from '../helpers/reference.ts';
import { UNAVAILABLE_EVENT, type UnavailableEvent } from '../../src/index.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';
import type { SmtpSinkOptions } from '../helpers/smtp.ts';
import { scale } from '../helpers/scale.ts';

const site = siteClient('outage-site', { client_uri: 'https://shop.example' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The outages: 8 s and 15 s in the scale tier (test/helpers/scale.ts); in
 * `npm test` 4 s and 6 s, both past the point where the reconnect delay stops
 * growing (400 ms from the fourth try, src/store/availability.ts), where
 * ioredis' own schedule would still be growing.
 */
const SHORT = scale(4000, 8000);
const LONG = scale(6000, 15_000);

describe('Redis stopped under load (a redis-server of the test’s own, killed and restarted; the client built as the reference provider builds it)', () => {
  let redis: OwnedRedis;
  let h: Harness;
  let warnings: string[];
  let errors: string[];
  let smtp: SmtpSinkOptions;

  before(async () => {
    // Every acknowledged write is on disk: what the restart brings back is what Redis answered.
    redis = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always']);
    // REDIS_URL=redis://... as `npm start` reads it: the reconnect settings that ship, none of the test's own.
    ({ h, warnings, errors, smtp } = await startFaultHarness('outage', site, redisFromUrl(redis.url)));
  });
  after(async () => {
    // The redis-server goes whatever happened before: a failed test must not leave it running.
    try {
      await redis?.start();
      await h?.close();
    } finally {
      await redis?.close();
    }
  });

  /**
   * Three sites at work; letters with the mail server and in the queue when
   * Redis is killed for `outageMs` (`during` runs meanwhile); Redis started
   * again; a letter for each person queued BACK_WITHIN later; the load runs
   * 2.5 s more. Then what any fault must show, with every request sent
   * BACK_WITHIN after the restart served.
   */
  async function outage(name: string, emails: string[], outageMs: number, during: (load: Load) => Promise<void> = async () => {}): Promise<Load> {
    const load = await startLoad(h, site, emails);
    await sleep(800);
    // Four letters with the mail server (the worker's four at a time) and two waiting in the queue when Redis goes.
    await lettersInHand(h, load, smtp, { name: `${name} before`, count: 6, inHand: 4, delayMs: 500 });
    const killedAt = load.now();
    await redis.kill('SIGKILL');
    await during(load);
    await sleep(killedAt + outageMs - load.now());
    // Taken before the process starts: it accepts connections later than this.
    const restartedAt = load.now();
    await redis.start();
    await sleep(restartedAt + BACK_WITHIN - load.now());
    // The letter queue moves again as promptly.
    const lettersIn = await lettersThrough(h, load, `${name} after`);
    await sleep(restartedAt + BACK_WITHIN + 2500 - load.now());
    await load.stop();

    const { answers } = load;
    const back = servedAgain(answers, restartedAt);
    console.log(`      ${name}: Redis killed at ${killedAt} ms, started again at ${restartedAt} ms; ${answers.length} answers, ${answers.filter((a) => a.status === 503).length} of them 503, slowest ${Math.max(...answers.map((a) => a.ms))} ms; served again ${Object.entries(back).map(([what, ms]) => `${what} +${ms} ms`).join(', ')}; letters queued ${BACK_WITHIN} ms later at the mail server ${lettersIn} ms after their 202`);
    // While Redis was down, nothing succeeded.
    const down = answers.filter((a) => a.at > killedAt + FAULT_BOUND + 100 && a.at + a.ms < restartedAt);
    expect(down.length).to.be.above(5);
    expect(down.every((a) => a.status === 503)).to.equal(true);
    await expectFaultSurvived(h, load, { slowestMs: FAULT_BOUND + 700, backBy: restartedAt + BACK_WITHIN, lettersThroughMs: lettersIn, warnings });
    return load;
  }

  it(`${SHORT / 1000} s: every request during the outage answered 503 temporarily_unavailable with Retry-After within the bound, none hangs; served again within 1 s of the restart; every refresh chain in use works and every letter goes out once`, async function () {
    this.timeout(60_000);
    const told: UnavailableEvent[] = [];
    const offUnavailable = h.reference.plugin.on(UNAVAILABLE_EVENT, (e) => told.push(e));
    const errorsBefore = errors.length;
    let page: Response | undefined;
    let authorize: Response | undefined;
    const load = await outage('eight', ['out1@example.com', 'out2@example.com', 'out3@example.com'], SHORT, async ({ chains: [chain] }) => {
      await sleep(1500);
      // A person's browser meets the outage too: a page in their language.
      page = await chain!.agent.request('GET', `${h.issuer}/console`, undefined, { 'accept-language': 'de' });
      // A site sends the person to sign in: the site is told (RFC 6749 section 4.1.2.1).
      authorize = await chain!.agent.get(`${h.issuer}/auth?${new URLSearchParams({
        client_id: site.client_id, response_type: 'code', scope: 'openid', redirect_uri: site.redirect_uris![0]!, state: 'st-out',
        code_challenge: 'x'.repeat(43), code_challenge_method: 'S256',
      })}`);
    });
    offUnavailable();
    // Every queue and worker (letters, logouts, Shared Signals, the expiry sweep) logs a failing connection
    // once per reason in 10 s, however often ioredis tries again: the log stays readable through an outage.
    const repeats = new Map<string, number>();
    for (const line of errors.slice(errorsBefore)) repeats.set(line, (repeats.get(line) ?? 0) + 1);
    expect([...repeats].filter(([, n]) => n > 2), 'error lines repeated more than twice in the outage').to.deep.equal([]);

    // Each 503 told the host (plugin.on), with the route and what failed, and no data.
    expect(told.length).to.be.at.least(load.answers.filter((a) => a.status === 503).length);
    expect(told.some((e) => e.method === 'GET' && e.path === '/console')).to.equal(true);
    for (const e of told) expect(Object.keys(e).sort()).to.deep.equal(['method', 'path', 'reason']);

    expect(page!.status).to.equal(503);
    expect(page!.headers.get('retry-after')).to.equal('2');
    expect(page!.body).to.include('Vorübergehend nicht verfügbar');
    expect(page!.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(authorize!.status).to.equal(303);
    expect(Object.fromEntries(new URL(authorize!.location!).searchParams)).to.include({ error: 'temporarily_unavailable', state: 'st-out' });
  });

  it(`${LONG / 1000} s: the same; served again within 1 s of the restart although the client has been trying for ${LONG / 1000} s`, async function () {
    this.timeout(60_000);
    await outage('fifteen', ['out4@example.com', 'out5@example.com', 'out6@example.com'], LONG);
  });
});
