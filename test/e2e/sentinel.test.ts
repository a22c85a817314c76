import { expect } from 'chai';

import { redisFromUrl } from '../../examples/reference/settings.ts';
import { BACK_WITHIN, expectFaultSurvived, FAULT_BOUND, lettersInHand, lettersThrough, servedAgain, startFaultHarness, startLoad } from '../helpers/load.ts';
import { siteClient, type Harness } from '../helpers/reference.ts';
import { startSentinel, type OwnedSentinel } from '../helpers/sentinel.ts';
import type { SmtpSinkOptions } from '../helpers/smtp.ts';

const site = siteClient('sentinel-site', { client_uri: 'https://shop.example' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Sentinel: the master killed under load (a master, a replica and three sentinels of the test’s own; the client built from REDIS_URL as the reference provider builds it)', () => {
  let sentinel: OwnedSentinel;
  let h: Harness;
  let warnings: string[];
  let smtp: SmtpSinkOptions;

  before(async function () {
    this.timeout(60_000);
    sentinel = await startSentinel({ downAfterMs: 1000 });
    ({ h, warnings, smtp } = await startFaultHarness('sentinel', site, redisFromUrl(sentinel.url)));
  });
  after(async () => {
    // The five redis-servers go whatever happened before: a failed test must not leave them running.
    try {
      await h?.close();
    } finally {
      await sentinel?.close();
    }
  });

  it('answers only 200, 202 or 503 with Retry-After while the sentinels fail over, serves again within 1 s of the promotion; the refresh chains survive and letters queued before and after go out once each', async function () {
    this.timeout(90_000);
    const load = await startLoad(h, site, ['sen1@example.com', 'sen2@example.com', 'sen3@example.com']);
    await sleep(800);
    const watch = await sentinel.watchSwitch();
    // Four letters with the mail server (the worker's four at a time) and two waiting in the queue when Redis goes.
    await lettersInHand(h, load, smtp, { name: `sentinel before`, count: 6, inHand: 4, delayMs: 500 });
    const killedAt = load.now();
    await sentinel.master.kill('SIGKILL');
    const promoted = await watch.switched;
    watch.close();
    const promotedAt = promoted.first - load.started;
    await sleep(promotedAt + BACK_WITHIN - load.now());
    // The letter queue moves again as promptly.
    const lettersIn = await lettersThrough(h, load, `sentinel after`);
    await sleep(promotedAt + BACK_WITHIN + 2500 - load.now());
    await load.stop();

    const { answers } = load;
    const back = servedAgain(answers, promotedAt);
    console.log(`      failover: master :${sentinel.master.port} killed at ${killedAt} ms, :${promoted.port} announced by the first sentinel at ${promotedAt} ms, by the last at ${promoted.last - load.started} ms; ${answers.length} answers, ${answers.filter((a) => a.status === 503).length} of them 503, slowest ${Math.max(...answers.map((a) => a.ms))} ms; served again ${Object.entries(back).map(([what, ms]) => `${what} +${ms} ms`).join(', ')}; letters queued ${BACK_WITHIN} ms later at the mail server ${lettersIn} ms after their 202`);
    expect(promoted.port).to.equal(sentinel.replica.port);
    await expectFaultSurvived(h, load, { slowestMs: FAULT_BOUND + 700, backBy: promotedAt + BACK_WITHIN, lettersThroughMs: lettersIn, warnings });
  });
});
