/**
 * `npm run bench`: throughput, latency, Redis round trips and memory of the
 * plugin's main jobs, side by side with plain oidc-provider on an unbounded
 * in-memory adapter (B), on the same Redis through the usual naive adapter
 * (C, the peer), and on B with A's Redis round trips as PINGs (D, the floor
 * of those round trips). `npm run bench -- --help` lists the options;
 * docs/performance.md says what is judged and why.
 *
 *   A  oidc-provider + the plugin on Redis      (child process, bench/server-process.ts)
 *   B  oidc-provider + unbounded memory adapter (child process)
 *   C  oidc-provider + naive Redis adapter      (child process, adapters/previous/example-redis.ts)
 *   D  B + N PINGs per request, A's N           (child process; operations 1-4 only)
 *   (one host on all four: bench/host.ts, bench/servers.ts)
 *   the SMTP sink that counts letters            (child process, bench/sink-process.ts)
 *   autocannon, the fixed-rate driver (ops/open-loop.ts), Redis INFO and the text rules run here.
 *
 * Writes the report to stdout and bench/results/<date>-<HHMM>-<full|partial>.md
 * (bench/results-index.ts), and updates bench/results/README.md.
 *
 * This file orders the operations; the run's state is bench/context.ts, the
 * operations http-ops.ts, notify-ops.ts, memory.ts and growth.ts, the targets
 * targets.ts, the markdown report-md.ts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';

import { Bench, PEOPLE, type Server } from './context.ts';
import { growthOp, growthReps, GROWTH_BATCH, INBOX_PAGE, SMALL_FILLER } from './growth.ts';
import { httpOp, raceOp } from './http-ops.ts';
import { cpuTicks, STEAL_LIMIT } from './machine.ts';
import { memoryOp } from './memory.ts';
import { adoptionOp } from './ops/adoption.ts';
import { lettersOp, notifyAtRateOp, notifyOp } from './notify-ops.ts';
import { ioredisCost } from './ops/ioredis-cost.ts';
import { benchText } from './ops/text.ts';
import { benchOptions, runKind } from './options.ts';
import { int } from './report.ts';
import { report } from './report-md.ts';
import { writeIndex } from './results-index.ts';
import type { Counters } from './server-api.ts';

const opts = benchOptions();
const bench = await Bench.start(opts);
const loadBefore = loadavg();
const ticksBefore = cpuTicks();
process.once('SIGINT', () => {
  bench.log('interrupted: cleaning up');
  void bench.cleanUp().finally(() => process.exit(130));
});

/** Notes on what the servers logged and held, for the report. */
function serverNotes(counters: { A: Counters; B: Counters; C?: Counters; D?: Counters }): void {
  const { notes, results } = bench.collected;
  if (counters.B.entries !== undefined && results.length) {
    notes.push(`B's in-memory adapter held ${int(counters.B.entries)} entries after its last operation, when it was stopped (oidc-provider's built-in one keeps 1,000 and drops the rest, KNOWN-TRAPS item 1); every token sampled before a run answered as expected on both servers.`);
  }
  const logged = (name: string, c: Counters | undefined) => (c ? `; ${name} ${c.errors} errors, ${c.warnings} warnings` : '');
  if (Object.values(counters).some((c) => c && (c.errors || c.warnings))) {
    notes.push(`Server logs: A ${counters.A.errors} errors, ${counters.A.warnings} warnings${logged('B', counters.B)}${logged('C', counters.C)}${logged('D', counters.D)} (printed on stderr during the run).`);
  }
}

const countersOf = async (s: Server | undefined) => s?.remote.call('counters', undefined);

try {
  await mkdir(opts.out, { recursive: true });
  const names = (['A', 'B', opts.withC && 'C', opts.withD && 'D'] as const).filter((n) => n !== false);
  bench.log(`${names.join(', ')} starting (prefix ${bench.prefix}${opts.withC ? `, C ${bench.prefixC}` : ''})`);
  for (const [i, server] of (await Promise.all(names.map((n) => bench.spawn(n)))).entries()) bench.servers[names[i]!] = server;
  const infos = await Promise.all(Object.values(bench.servers).map((x) => x.remote.call('info', undefined)));
  for (const info of infos.slice(1)) {
    if (JSON.stringify(infos[0]!.expiresIn) !== JSON.stringify(info.expiresIn)) {
      throw new Error(`A and ${info.kind} disagree on token lifetimes: ${JSON.stringify(infos[0]!.expiresIn)} vs ${JSON.stringify(info.expiresIn)}`);
    }
  }
  await Promise.all(Object.values(bench.servers).map((x) => x.remote.call('accounts', { count: PEOPLE + 122 })));

  for (const name of ['introspect', 'introspect-revoked', 'refresh', 'code', 'revoke'] as const) {
    if (opts.ops.has(name)) await httpOp(bench, name);
  }
  if (opts.ops.has('race')) await raceOp(bench);
  // The rest runs on A alone. B and D hold every token minted for them (millions) and would go on
  // collecting garbage in the background, on the cores A's runs need; C's keys would weigh on Redis.
  const [countersB, countersC, countersD] = [await countersOf(bench.servers.B), await countersOf(bench.servers.C), await countersOf(bench.servers.D)];
  await bench.stopOthers();
  if (opts.ops.has('notify')) await notifyOp(bench);
  if (opts.ops.has('letters')) await lettersOp(bench);
  if (opts.ops.has('notify')) await notifyAtRateOp(bench);
  if (opts.ops.has('text')) {
    bench.log('7. Text rules');
    bench.collected.text = benchText(opts.quick ? 0.2 : 2);
  }
  if (opts.ops.has('ioredis')) {
    bench.log('ioredis: CPU per command');
    bench.collected.clientCost = await ioredisCost(opts.redisUrl, bench.prefix, opts.quick ? 10_000 : 40_000);
  }
  if (opts.ops.has('memory')) await memoryOp(bench);
  if (opts.ops.has('growth')) await growthOp(bench);
  if (opts.ops.has('adoption')) bench.collected.adoption = await adoptionOp(bench);

  serverNotes({ A: (await countersOf(bench.a))!, B: countersB!, C: countersC, D: countersD });
  const markdown = report({
    ...bench.collected,
    opts,
    kind: runKind(opts),
    startedAt: bench.startedAt,
    redisInfo: bench.redisInfo,
    loadBefore,
    ticksBefore,
    constants: { STEAL_LIMIT, MAX_RETRIES: bench.maxRetries, GROWTH_BATCH, SMALL_FILLER, INBOX_PAGE, growthReps: growthReps(opts.quick) },
  });
  const file = join(opts.out, `${bench.stem}.md`);
  await writeFile(file, markdown);
  await writeIndex(opts.out);
  console.log(markdown);
  bench.log(`written to ${file}`);
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await bench.cleanUp();
}
