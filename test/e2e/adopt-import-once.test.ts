/**
 * The bulk import run twice at once (issue 33's review: an operator starts a
 * second run, or a job is restarted while the first still runs): one run at a
 * time per store, by a lease in the store (lua/adopt_lease.lua). The second
 * is refused with ImportRunningError and writes nothing; a dry run goes on
 * beside it; a run killed without giving the lease back blocks the next one
 * only until the lease lapses. Two plugins on one store, as two processes.
 */
import { expect } from 'chai';

import { ImportRunningError } from '../../src/adoption.ts';
import { createSignoutNotify, type SignoutNotify } from '../../src/index.ts';
import { hostRedisAdapter, listedInteractions } from '../helpers/previous/example-redis.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

const RECORDS = 300;
const quiet = { info() {}, warn() {}, error() {} };

describe('the bulk import, run twice at once: one run at a time per store', function () {
  this.timeout(60_000);
  const world = setUp(async () => {
    const redis = testRedis();
    const prefix = uniquePrefix('adopt-once');
    const before = hostRedisAdapter(`${prefix}previous:`);
    const { records: listing } = await listedInteractions(before, 'once', RECORDS);
    const records = () => listing;
    const make = (listed = true) => createSignoutNotify({ redis, keyPrefix: prefix, contacts: async () => undefined, logger: quiet, previousAdapter: before.Adapter, adoption: listed ? { records: records() } : {} });
    const plugins: SignoutNotify[] = [make(), make()];
    return {
      redis, prefix, plugins,
      /** Another process started now, as a command or a job is. */
      started(listed: boolean) {
        const plugin = make(listed);
        plugins.push(plugin);
        return plugin;
      },
      async close() {
        for (const plugin of plugins) await plugin.close();
        await before.close();
        await dropPrefix(redis, prefix);
        await redis.quit();
      },
    };
  });

  it('refuses a second run while the first holds the lease (ImportRunningError, nothing written), lets a dry run go on beside it, and the first finishes alone', async () => {
    const [first, second] = world().plugins as [SignoutNotify, SignoutNotify];
    let running!: () => void;
    const started = new Promise<void>((resolve) => { running = resolve; });
    const one = first.adoption!.importRecords({ perSecond: 600, onProgress: () => running() });
    await started;
    expect((await second.adoption!.status()).running).to.equal(true);
    const refused = await second.adoption!.importRecords().then(() => undefined, (err: unknown) => err);
    expect(refused).to.be.instanceOf(ImportRunningError);
    expect((refused as ImportRunningError).heldForMs).to.be.within(1, 15_000);
    const dry = await second.adoption!.importRecords({ dryRun: true, perSecond: 10_000 });
    expect({ dryRun: dry.dryRun, seen: dry.seen, finished: dry.finishedAt }).to.deep.equal({ dryRun: true, seen: RECORDS, finished: undefined });
    const done = await one;
    expect({ seen: done.seen, moved: done.moved, alreadyMoved: done.alreadyMoved, failed: done.failed, finished: typeof done.finishedAt })
      .to.deep.equal({ seen: RECORDS, moved: RECORDS, alreadyMoved: 0, failed: 0, finished: 'number' });
    const status = await second.adoption!.status();
    expect({ running: status.running, seen: status.import?.seen, moved: status.import?.moved }).to.deep.equal({ running: false, seen: RECORDS, moved: RECORDS });
  });

  it('a lease left by a run that died (never given back) blocks the next run until it lapses, then the next run goes', async () => {
    const [, second] = world().plugins as [SignoutNotify, SignoutNotify];
    const lease = `${world().prefix}{adopt}:import:lease`;
    await world().redis.set(lease, 'a-run-that-was-killed', 'PX', 400);
    const refused = await second.adoption!.importRecords({ again: true }).then(() => undefined, (err: unknown) => err);
    expect(refused).to.be.instanceOf(ImportRunningError);
    const deadline = Date.now() + 5000;
    while ((await world().redis.exists(lease)) === 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const again = await second.adoption!.importRecords({ again: true, perSecond: 10_000 });
    expect({ seen: again.seen, alreadyMoved: again.alreadyMoved + again.gone, finished: typeof again.finishedAt }).to.deep.equal({ seen: RECORDS, alreadyMoved: RECORDS, finished: 'number' });
    expect(await world().redis.exists(lease)).to.equal(0);
  });

  it('a process started after the import finished asks the store before deleteAccount would walk the previous store (without a listing it would have been refused)', async () => {
    const fresh = world().started(false);
    expect(await fresh.deleteAccount('someone')).to.have.keys('sites', 'keysErased', 'jobsDropped');
  });
});
