/**
 * `/api/notify` and the letters in `npm run bench`: operation 5 as fast as it
 * goes (through http-ops.ts), 6 the letter worker alone into the SMTP sink,
 * and 5b the route at a fixed rate while a letter worker sends.
 */
import { setPriority } from 'node:os';

import type { Bench, Server } from './context.ts';
import { httpOp, profile } from './http-ops.ts';
import { stolenPct } from './machine.ts';
import { drive, roundRobin } from './ops/drive.ts';
import { HTTP_OPS } from './ops/oauth.ts';
import { int, ms, num } from './report.ts';
import { aggregate, type Measured, type NotifyAtRate } from './results.ts';
import { targetNotify } from './targets.ts';

/** 5. /api/notify as fast as it goes (the letter worker off: letters only queue). */
export async function notifyOp(bench: Bench): Promise<void> {
  await httpOp(bench, 'notify');
}

/** CPU time (µs) of the letter worker's process (0 when it runs in A's) and of the SMTP sink's, so far. */
async function lettersSideCpu(bench: Bench, worker: Server | undefined): Promise<{ worker: number; sink: number }> {
  const [counters, sinkCpu] = await Promise.all([worker?.remote.call('counters', undefined), bench.sink.call('cpuMicros', undefined)]);
  return { worker: counters?.cpuMicros ?? 0, sink: sinkCpu };
}

export const notifyState = (bench: Bench): NotifyAtRate => {
  const { notifyAtRate, notifyAtRateAlone, lettersDuringRate } = bench.collected;
  return { rate: bench.opts.notifyRate, at: notifyAtRate, alone: notifyAtRateAlone, letters: lettersDuringRate };
};

/** Starts the letter worker of 5b: a process of its own at a lower priority, or A's own with --worker-in-process. */
async function startWorker(bench: Bench): Promise<Server | undefined> {
  if (bench.opts.workerInProcess) {
    await bench.a.remote.call('startLetterWorker', undefined);
    return undefined;
  }
  const worker = await bench.spawn('A');
  // Letters are background work: on shared cores the answers come first (docs/operations.md "Topology").
  setPriority(worker.remote.pid, bench.opts.workerNice);
  await worker.remote.call('startLetterWorker', undefined);
  return worker;
}

/**
 * 5b. /api/notify at a fixed rate while the letter worker sends: the letters
 * these requests queue (and any left from before) go out into the SMTP sink
 * during the runs, on the same cores and the same Redis. The worker runs as
 * docs/operations.md advises, in a process of its own (A's host and plugin
 * with the same settings, its worker started); `--worker-in-process` runs it
 * in A's process instead, sharing A's event loop.
 */
export async function notifyAtRateOp(bench: Bench): Promise<void> {
  const { opts, collected } = bench;
  const op = HTTP_OPS.notify;
  bench.log(`  /api/notify at ${opts.notifyRate} req/s, the letter worker sending (${opts.workerInProcess ? 'in A\'s process' : `in a process of its own, nice ${opts.workerNice}`})`);
  const atRate = { connections: opts.connections, duration: opts.duration, overallRate: opts.notifyRate };
  // Operation 6 may have started A's own worker: first the rate with none, then with the worker process alone.
  await bench.a.remote.call('stopLetterWorker', undefined);
  // Every timed run follows a warm-up under the same load: this first run at the fixed rate is not counted.
  await bench.load(bench.a, op, atRate);
  collected.notifyAtRateAlone = aggregate([await bench.load(bench.a, op, atRate)]);
  bench.log(`  without a worker: p99 ${ms(collected.notifyAtRateAlone.latency.p99)} ms`);
  const worker = await startWorker(bench);
  // The worker process is new: like every server before its timed runs, it
  // first warms up, one run at the rate not counted (a worker in service runs
  // for days). Its first seconds compile its code beside the server's work:
  // on 2026-11-25, p99 12-14 ms over them, 5-8 ms in the runs after.
  const warm = await bench.load(bench.a, op, atRate);
  bench.log(`  warm-up at ${opts.notifyRate} req/s with the worker sending: p99 ${ms(warm.latency.p99)} ms`);
  const runs: Measured[] = [];
  const sum = { letters: 0, seconds: 0, workerCpu: 0, sinkCpu: 0 };
  for (let round = 0, retries = 0; round < opts.rounds;) {
    const [before, cpuBefore] = [await bench.received(), await lettersSideCpu(bench, worker)];
    const r = await bench.load(bench.a, op, atRate);
    const [sent, cpuAfter] = [(await bench.received()) - before, await lettersSideCpu(bench, worker)];
    bench.log(`  rate round ${round + 1}: ${int(r.rps)} req/s, p99 ${ms(r.latency.p99)} ms, non-2xx ${r.non2xx}, errors ${r.errors}, ${int(sent / r.seconds)} letters/s sent meanwhile, ${num(stolenPct(r), 0)} % stolen`);
    if (bench.stolenRound([r], retries, `/api/notify at ${opts.notifyRate} req/s, round ${round + 1}`)) {
      retries += 1;
      continue;
    }
    runs.push(r);
    sum.letters += sent;
    sum.seconds += r.seconds;
    sum.workerCpu += cpuAfter.worker - cpuBefore.worker;
    sum.sinkCpu += cpuAfter.sink - cpuBefore.sink;
    round += 1;
  }
  collected.notifyAtRate = aggregate(runs);
  collected.lettersDuringRate = {
    letters: sum.letters,
    seconds: sum.seconds,
    perSecond: sum.letters / sum.seconds,
    workerCores: worker ? sum.workerCpu / 1e6 / sum.seconds : undefined,
    sinkCores: sum.sinkCpu / 1e6 / sum.seconds,
  };
  if (worker) {
    await worker.remote.call('stopLetterWorker', undefined);
    await worker.remote.stop();
  }
  const result = collected.results.find((x) => x.op.name === 'notify');
  if (result && !targetNotify(result, notifyState(bench)).pass && !opts.profile) {
    await profile(bench, op, atRate, { A: opts.notifyRate }, 'A');
  }
  // What is left in the queue would be sent during the runs that follow.
  await bench.a.remote.call('drainLetters', undefined);
}

/** 6. The letter worker alone: letters queued through the route with the worker off, then sent into the SMTP sink. */
export async function lettersOp(bench: Bench): Promise<void> {
  const { opts } = bench;
  bench.log('6. Letter worker into the SMTP sink');
  const op = HTTP_OPS.notify;
  const a = bench.a.remote;
  await a.call('drainLetters', undefined);
  const queued = await drive(bench.a.url, { path: op.path, headers: op.headers, body: roundRobin(await bench.connectedPeople(), op.body), expect: op.expect }, { connections: opts.connections, amount: opts.letters });
  if (queued.ok !== opts.letters) throw new Error(`queueing ${opts.letters} letters: only ${queued.ok} accepted`);
  const pending = await a.call('pendingLetters', undefined);
  const before = await bench.received();
  const start = process.hrtime.bigint();
  await a.call('startLetterWorker', undefined);
  await bench.sink.call('waitFor', { count: before + pending, timeoutMs: 300_000 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  // Anything more than `pending` would be a letter sent twice.
  await new Promise((r) => setTimeout(r, 500));
  bench.collected.letterResult = {
    letters: pending,
    seconds,
    perSecond: pending / seconds,
    received: (await bench.received()) - before,
    pendingAfter: await a.call('pendingLetters', undefined),
  };
  bench.log(`  ${pending} letters in ${num(seconds)} s: ${int(bench.collected.letterResult.perSecond)} letters/s`);
}
