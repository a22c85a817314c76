import { expect } from 'chai';

import { startCluster, type OwnedCluster } from '../helpers/cluster.ts';
import { FAULT_BOUND, startFaultHarness, startLoad, unexpected } from '../helpers/load.ts';
import { clusterClient } from '../helpers/redis.ts';
import { siteClient, type Harness } from '../helpers/reference.ts';

const site = siteClient('failover-site', { client_uri: 'https://shop.example' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a Cluster master killed under load (a Cluster of the test’s own)', () => {
  let cluster: OwnedCluster;
  let h: Harness;
  let warnings: string[];

  before(async function () {
    this.timeout(60_000);
    cluster = await startCluster({ nodeTimeoutMs: 1000 });
    ({ h, warnings } = await startFaultHarness('failover', site, clusterClient(cluster.spec)));
  });
  after(async () => {
    await h?.close();
    await cluster?.close();
  });

  it('answers only 200, 202 or 503 with Retry-After (never a 500) while the replica takes over, and the refresh chains work afterwards', async function () {
    this.timeout(90_000);
    const load = await startLoad(h, site, ['fo1@example.com', 'fo2@example.com', 'fo3@example.com', 'fo4@example.com', 'fo5@example.com', 'fo6@example.com']);
    await sleep(800);
    const [victim] = await cluster.masters();
    const killedAt = load.now();
    await cluster.nodes.find((n) => n.port === victim)!.kill('SIGKILL');
    await cluster.waitHealthy();
    const healthyAt = load.now();
    await sleep(3000);
    await load.stop();
    const { answers } = load;

    expect(unexpected(answers)).to.deep.equal([]);
    const unavailable = answers.filter((a) => a.status === 503);
    for (const a of unavailable) {
      expect(a.retryAfter).to.equal('2');
      expect(a.json).to.include({ error: 'temporarily_unavailable' });
    }
    console.log(`      failover: master :${victim} killed at ${killedAt} ms, Cluster healthy at ${healthyAt} ms; ${answers.length} answers, ${unavailable.length} of them 503, slowest ${Math.max(...answers.map((a) => a.ms))} ms`);
    expect(unavailable.length, 'the outage was seen').to.be.above(0);
    expect(Math.max(...answers.map((a) => a.ms)), 'slowest answer (ms)').to.be.below(2 * FAULT_BOUND + 1000);
    // Once the replica has taken over, everything answers again.
    expect(answers.filter((a) => a.at > healthyAt + 1500).every((a) => a.status !== 503)).to.equal(true);

    for (const chain of load.chains) {
      const r = await load.refresh(chain);
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      expect((await load.introspect(chain.access)).json).to.include({ active: true });
    }
    expect(warnings.filter((w) => /reuse detected/.test(w))).to.deep.equal([]);
  });
});
