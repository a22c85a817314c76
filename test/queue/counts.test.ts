/**
 * The queue kit (src/queue/), continued from kit.test.ts: the queues' counts
 * (plugin.queues()'s reader), taking a person's jobs out in every state or
 * the done ones, and the throttled log. On Redis, or the Cluster in the
 * Cluster pass.
 */
import { expect } from 'chai';

import { queueCounts } from '../../src/queue/counts.ts';
import { DONE_STATES, dropJobs, durableQueue } from '../../src/queue/durable.ts';
import { throttled } from '../../src/queue/log.ts';
import { logTo, type LogLine } from '../helpers/log.ts';
import { until } from '../helpers/poll.ts';
import { REDIS_CLUSTER, redisUnderPrefix } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

describe(`the queue kit: taking jobs out, and the counts (${REDIS_CLUSTER ? 'Redis Cluster' : 'Redis'})`, () => {
  const world = setUp(async () => redisUnderPrefix('queue-kit-counts'));

  it('counts each state, the oldest waiting one\'s age; takes out the matching jobs in every state, or only the done ones', async () => {
    const { redis, prefix } = world();
    const zero = { waiting: 0, active: 0, delayed: 0, failed: 0, oldestWaitingSeconds: null };
    expect(await queueCounts(redis, prefix)).to.deep.equal({ letters: zero, logouts: zero, sharedSignals: zero, sessionExpiry: zero });
    const queue = durableQueue<{ who: string }, void>(redis, prefix, { of: 'sharedSignals', label: 'kit', logger: logTo([]), concurrency: 1 });
    let release: () => void = () => {};
    queue.startWorker(async (job) => {
      if (job.data.who === 'fails') throw new Error('no');
      if (job.data.who === 'holds') await new Promise<void>((r) => { release = r; });
    });
    await queue.add('kit', { who: 'fails' }, { jobId: 'f', attempts: 1 });
    await queue.add('kit', { who: 'done' }, { jobId: 'd' });
    await queue.add('kit', { who: 'holds' }, { jobId: 'h' });
    await until('the job in hand', async () => (await queue.queue.getActiveCount()) > 0, 2_000);
    await queue.add('kit', { who: 'waits' }, { jobId: 'w' });
    await queue.add('kit', { who: 'first' }, { jobId: 'p', priority: 1 });
    await queue.add('kit', { who: 'later' }, { jobId: 'l', delay: 60_000 });
    // The oldest waiting job's age, from its own timestamp (the clock BullMQ dated it by), not the test's.
    const { timestamp: oldestAt } = (await queue.queue.getJob('w'))!;
    const counted = await queueCounts(redis, prefix, oldestAt + 5_500);
    expect(counted.sharedSignals).to.deep.equal({ waiting: 2, active: 1, delayed: 1, failed: 1, oldestWaitingSeconds: 5 });
    expect(counted.letters).to.deep.equal(zero);
    // Done ones only: the failed and the completed.
    expect(await dropJobs(queue.queue, () => true, DONE_STATES)).to.equal(2);
    // Every state a job can be taken from (the one in hand stays): waiting, prioritized, delayed.
    expect(await dropJobs(queue.queue, (data) => data.who !== 'nobody')).to.equal(3);
    expect((await queueCounts(redis, prefix)).sharedSignals).to.deep.include({ waiting: 0, delayed: 0, failed: 0, active: 1 });
    release();
    await queue.close();
  });
});

describe('the queue kit: the throttled log', () => {
  it('one line per reason every 10 s, with how many were left out', () => {
    const lines: LogLine[] = [];
    const log = throttled(logTo(lines), 'queue error', 10_000);
    for (let i = 0; i < 5; i += 1) log(new Error('ECONNREFUSED'));
    log(new Error('other'));
    expect(lines.map((l) => [l.message, l.fields])).to.deep.equal([
      ['queue error', { reason: 'ECONNREFUSED' }], ['queue error', { reason: 'other' }],
    ]);
    const soon = throttled(logTo(lines), 'again', 0);
    soon(new Error('x'));
    soon(new Error('x'));
    expect(lines.slice(2).map((l) => l.fields)).to.deep.equal([{ reason: 'x' }, { reason: 'x' }]);
  });

  it('says how many were left out once the period is over; forgets its reasons past a hundred', async () => {
    const lines: LogLine[] = [];
    const log = throttled(logTo(lines), 'queue error', 50);
    for (let i = 0; i < 3; i += 1) log(new Error('down'));
    await new Promise((r) => setTimeout(r, 80));
    log(new Error('down'));
    expect(lines.map((l) => l.fields)).to.deep.equal([{ reason: 'down' }, { reason: 'down', repeated: 2 }]);
    // 101 reasons within the period: the memory is cleared, so the first is logged again.
    const many: LogLine[] = [];
    const wide = throttled(logTo(many), 'queue error', 60_000);
    for (let i = 0; i <= 100; i += 1) wide(new Error(`reason ${i}`));
    wide(new Error('reason 0'));
    wide(new Error('reason 1'));
    expect(many.slice(100).map((l) => l.fields)).to.deep.equal([{ reason: 'reason 100' }, { reason: 'reason 0' }, { reason: 'reason 1' }]);
  });
});
