/**
 * The queue kit (src/queue/): the durable queue on Redis (or the Cluster in
 * the Cluster pass) and its in-process twin try a failing job again at the
 * documented times (backoffMs, then twice that; a first delay where asked),
 * give up after `attempts` or at once on a permanent failure, keep one job
 * per id, and start, stop and close safely however often they are called.
 * The times are read from the clock that decides (Date.now() in this process:
 * BullMQ reckons its delays by the client's clock).
 */
import { expect } from 'chai';

import { durableQueue, queuePrefix } from '../../src/queue/durable.ts';
import { inProcessQueue } from '../../src/queue/in-process.ts';
import { TIMER_EARLY_MS } from '../helpers/clock.ts';
import { logTo, type LogLine } from '../helpers/log.ts';
import { REDIS_CLUSTER, redisUnderPrefix } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

const BACKOFF_MS = 100;
/** Late by at most this much on a loaded machine; early by TIMER_EARLY_MS at most. */
const SLACK_MS = 1000;


async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const gaps = (times: number[]) => times.slice(1).map((at, i) => at - times[i]!);

describe('the queue kit: the in-process twin', () => {
  it('tries a failing job again after backoffMs, then twice that; once per id; the outcome hooks', async () => {
    const tries: { id: string; attempt: number; at: number }[] = [];
    const seen: string[] = [];
    const queue = inProcessQueue<{ id: string }, string>({
      id: (job) => job.id, attempts: 4, backoffMs: BACKOFF_MS, concurrency: 2,
      done: (job, result) => seen.push(`done ${job.id} ${result}`),
      retrying: (job, attempt, err) => seen.push(`retrying ${job.id} ${attempt} ${err.message}`),
    });
    queue.startWorker(async (job, attempt) => {
      tries.push({ id: job.id, attempt, at: Date.now() });
      if (attempt < 3) throw new Error(`try ${attempt}`);
      return `ok at ${attempt}`;
    });
    const queued = Date.now();
    await queue.add({ id: 'a' });
    await queue.add({ id: 'a' });
    expect(await queue.pending()).to.equal(1);
    await until('the third try', () => seen.length === 3);
    expect(tries.map((t) => [t.id, t.attempt])).to.deep.equal([['a', 1], ['a', 2], ['a', 3]]);
    expect(tries[0]!.at - queued).to.be.below(SLACK_MS);
    const [first, second] = gaps(tries.map((t) => t.at)) as [number, number];
    expect(first, 'the first wait').to.be.within(BACKOFF_MS - TIMER_EARLY_MS, BACKOFF_MS + SLACK_MS);
    expect(second, 'the second wait: twice the first').to.be.within(2 * BACKOFF_MS - TIMER_EARLY_MS, 2 * BACKOFF_MS + SLACK_MS);
    expect(seen).to.deep.equal(['retrying a 1 try 1', 'retrying a 2 try 2', 'done a ok at 3']);
    expect(await queue.pending()).to.equal(0);
    // Done: the same id is a new job again.
    await queue.add({ id: 'a' });
    expect(await queue.pending()).to.equal(1);
    await queue.close();
  });

  it('waits firstDelayMs before the first try; gives up after attempts, or at once on a permanent failure', async () => {
    const lines: string[] = [];
    const times: Record<string, number[]> = {};
    const queue = inProcessQueue<{ id: string }, void>({
      id: (job) => job.id, attempts: 2, backoffMs: BACKOFF_MS, firstDelayMs: 2 * BACKOFF_MS, concurrency: 1,
      permanent: (err) => err.message === 'permanent',
      givenUp: (job, attempt, err) => lines.push(`${job.id} given up at ${attempt}: ${err.message}`),
    });
    queue.startWorker(async (job) => {
      (times[job.id] ??= []).push(Date.now());
      throw new Error(job.id === 'p' ? 'permanent' : 'again');
    });
    const queued = Date.now();
    await Promise.all([queue.add({ id: 'p' }), queue.add({ id: 'r' })]);
    expect(queue.jobs().map((job) => job.id).sort()).to.deep.equal(['p', 'r']);
    await until('both given up', () => lines.length === 2);
    expect(lines.sort()).to.deep.equal(['p given up at 1: permanent', 'r given up at 2: again']);
    expect(times['p']![0]! - queued, 'the first delay').to.be.within(2 * BACKOFF_MS - TIMER_EARLY_MS, 2 * BACKOFF_MS + SLACK_MS);
    expect(times['p']).to.have.length(1);
    expect(gaps(times['r']!)[0]).to.be.within(BACKOFF_MS - TIMER_EARLY_MS, BACKOFF_MS + SLACK_MS);
    expect(await queue.pending()).to.equal(0);
    await queue.close();
  });

  it('drop takes jobs waiting and waiting to be tried again; stop waits for the one in hand; start, stop and close are safe to repeat', async () => {
    const ran: string[] = [];
    let release: () => void = () => {};
    const queue = inProcessQueue<{ id: string; hold?: boolean }, void>({ id: (job) => job.id, attempts: 3, backoffMs: 10 * BACKOFF_MS, concurrency: 1 });
    const work = async (job: { id: string; hold?: boolean }) => {
      ran.push(job.id);
      if (job.hold) await new Promise<void>((r) => { release = r; });
      if (job.id === 'fails') throw new Error('again');
    };
    await queue.add({ id: 'fails' });
    queue.startWorker(work);
    queue.startWorker(work);
    await until('the first try', () => ran.length === 1);
    // Waiting for its retry (10 backoffs away): dropped with a waiting one.
    await queue.stopWorker();
    await queue.add({ id: 'waits' });
    expect(queue.drop((job) => job.id !== 'none')).to.equal(2);
    expect([await queue.pending(), queue.jobs()]).to.deep.equal([0, []]);
    queue.startWorker(work);
    await queue.add({ id: 'held', hold: true });
    await until('the held job in hand', () => ran.includes('held'));
    let stopped = false;
    const stopping = queue.stopWorker().then(() => { stopped = true; });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped, 'stop waits for the job in hand').to.equal(false);
    release();
    await stopping;
    await queue.stopWorker();
    await queue.close();
    await queue.close();
    // Closed: nothing starts again.
    await queue.add({ id: 'after' });
    queue.startWorker(work);
    await new Promise((r) => setTimeout(r, 50));
    expect(ran).to.deep.equal(['fails', 'held']);
  });

  it('runs the next job when one finishes (concurrency 1); gives up without hooks; lists and drops jobs waiting; close stops the retries', async () => {
    const ran: string[] = [];
    const queue = inProcessQueue<{ id: string }, void>({ id: (job) => job.id, attempts: 2, backoffMs: 2 * BACKOFF_MS, concurrency: 1 });
    await Promise.all([queue.add({ id: 'one' }), queue.add({ id: 'two' }), queue.add({ id: 'three' })]);
    // Not started: all three wait, listed as they are.
    expect(queue.jobs().map((job) => job.id)).to.deep.equal(['one', 'two', 'three']);
    expect(queue.drop((job) => job.id === 'three')).to.equal(1);
    // Dropped: the same id is a job again.
    await queue.add({ id: 'three' });
    expect(queue.jobs().map((job) => job.id)).to.deep.equal(['one', 'two', 'three']);
    queue.startWorker(async (job, attempt) => {
      ran.push(`${job.id}:${attempt}`);
      if (job.id === 'two') throw new Error('again');
    });
    await until('every first try and the retry', () => ran.length === 4);
    expect(ran).to.deep.equal(['one:1', 'two:1', 'three:1', 'two:2']);
    // Given up with no hook to tell: the id is free again.
    for (let i = 0; i < 50 && (await queue.pending()) > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(await queue.pending()).to.equal(0);
    await queue.add({ id: 'two' });
    await until('two tried afresh', () => ran.length === 5);
    expect(ran.at(-1)).to.equal('two:1');
    // Closed while a retry waits: it never comes back.
    for (let i = 0; i < 100 && (await queue.pending()) !== 1; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(await queue.pending(), 'the retry timed').to.equal(1);
    await queue.close();
    await new Promise((r) => setTimeout(r, 3 * BACKOFF_MS));
    expect([await queue.pending(), ran.length]).to.deep.equal([0, 5]);
  });

  it('runs a try outside the async context of the call that queued it', async () => {
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const request = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const queue = inProcessQueue<{ id: string }, void>({ id: (job) => job.id, attempts: 2, backoffMs: 10, concurrency: 1 });
    queue.startWorker(async (job, attempt) => {
      seen.push(request.getStore());
      if (attempt === 1 && job.id === 'x') throw new Error('again');
    });
    await request.run('the request', () => queue.add({ id: 'x' }));
    await until('the retry', () => seen.length === 2);
    expect(seen).to.deep.equal([undefined, undefined]);
    await queue.close();
  });
});

describe(`the queue kit: the durable queue (${REDIS_CLUSTER ? 'Redis Cluster' : 'Redis'})`, () => {
  const world = setUp(async () => redisUnderPrefix('queue-kit'));

  it('tries a failing job again after backoffMs, then twice that (BullMQ exponential), under the queue\'s own hash tag', async () => {
    const { redis, prefix } = world();
    const lines: LogLine[] = [];
    const queue = durableQueue<{ n: number }, string>(redis, prefix, {
      of: 'letters', label: 'kit', logger: logTo(lines), concurrency: 1, stalledIntervalMs: 5000, permanent: (err) => err.message === 'permanent',
    });
    const tries: { n: number; attempt: number; at: number }[] = [];
    const heard: unknown[] = [];
    expect(queue.startWorker(async (job) => {
      tries.push({ n: job.data.n, attempt: job.attempt, at: Date.now() });
      if (job.data.n === 2) throw new Error('permanent');
      if (job.attempt < 3) throw new Error(`try ${job.attempt}`);
      return 'ok';
    }, {
      completed: (job, result) => heard.push(['completed', job.id, job.attempt, result]),
      failed: ({ id, attempt, final, err }) => heard.push(['failed', id, attempt, final, err.message]),
    })).to.equal(true);
    await queue.add('kit', { n: 1 }, { jobId: 'kit-1', attempts: 3, backoff: { type: 'exponential', delay: BACKOFF_MS } });
    await queue.add('kit', { n: 1 }, { jobId: 'kit-1', attempts: 3, backoff: { type: 'exponential', delay: BACKOFF_MS } });
    await until('the job done', () => heard.some((h) => (h as unknown[])[0] === 'completed'));
    expect(tries.map((t) => t.attempt)).to.deep.equal([1, 2, 3]);
    const [first, second] = gaps(tries.map((t) => t.at)) as [number, number];
    expect(first, 'the first wait').to.be.within(BACKOFF_MS - TIMER_EARLY_MS, BACKOFF_MS + SLACK_MS);
    expect(second, 'the second wait: twice the first').to.be.within(2 * BACKOFF_MS - TIMER_EARLY_MS, 2 * BACKOFF_MS + SLACK_MS);
    // A permanent failure is final at its first try.
    await queue.add('kit', { n: 2 }, { jobId: 'kit-2', attempts: 3, backoff: { type: 'exponential', delay: BACKOFF_MS } });
    await until('the permanent failure', () => heard.length === 4);
    expect(heard).to.deep.equal([
      ['failed', 'kit-1', 1, false, 'try 1'], ['failed', 'kit-1', 2, false, 'try 2'], ['completed', 'kit-1', 3, 'ok'], ['failed', 'kit-2', 1, true, 'permanent'],
    ]);
    expect(await queue.pending()).to.equal(0);
    // Every key of the queue under its one hash tag.
    const keys: string[] = [];
    const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis];
    for (const node of nodes) keys.push(...await node.keys(`${prefix}*`));
    expect(keys.length).to.be.above(0);
    expect(keys.every((key) => key.startsWith(`${queuePrefix(prefix, 'letters')}:letters:`)), keys.join(' ')).to.equal(true);
    await queue.close();
    expect(lines.filter((l) => l.level === 'error')).to.deep.equal([]);
  });

  it('start, stop and close are safe to repeat; a job queued while stopped waits for the next start; nothing starts after close', async () => {
    const { redis, prefix } = world();
    const queue = durableQueue<{ n: number }, void>(redis, prefix, { of: 'logouts', label: 'kit', logger: logTo([]), concurrency: 1, keep: { completedSeconds: 1, failedSeconds: 1 } });
    const ran: number[] = [];
    const work = async (job: { data: { n: number } }) => { ran.push(job.data.n); };
    expect([queue.startWorker(work), queue.startWorker(work)]).to.deep.equal([true, false]);
    await queue.add('kit', { n: 1 }, { jobId: 'one' });
    await until('the first job', () => ran.length === 1);
    await queue.stopWorker();
    await queue.stopWorker();
    await queue.add('kit', { n: 2 }, { jobId: 'two' });
    await new Promise((r) => setTimeout(r, 200));
    expect(ran).to.deep.equal([1]);
    expect(await queue.pending()).to.equal(1);
    queue.startWorker(work);
    await until('the second job', () => ran.length === 2);
    expect(ran).to.deep.equal([1, 2]);
    const [a, b] = [queue.close(), queue.close()];
    expect(a).to.equal(b);
    await a;
    expect(queue.startWorker(work)).to.equal(false);
    expect(ran).to.deep.equal([1, 2]);
  });
});
