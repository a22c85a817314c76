/**
 * `npm run bench:guard`: a short instruction count CI runs (.ci/run), so that
 * the next regression of the plugin's per-request work is noticed when it
 * lands, not weeks later (issue 37: introspection grew by 9 % between two
 * counts nobody compared).
 *
 * It counts A (the plugin) and D (B plus A's round trips as PINGs: no plugin
 * code) on introspection and refresh in one run, under callgrind as `npm run
 * bench:instructions` does (bench/callgrind.ts), with fewer requests, and
 * compares the main thread's instructions per request with the figures
 * committed in bench/guard.json. It fails (exit 1) when, for an operation,
 * - A's count rises more than `margin` above the committed `a`, or
 * - D/A falls more than `margin` below the committed `da`
 * (D runs none of the plugin's code: the ratio is A's own share of the
 * request, apart from what moves every server alike). The margin is the
 * spread of the main thread's count from run to run (about 8 %: when V8
 * collects garbage and what it has optimized by then still vary); an extra
 * step that does work on every request shows above it.
 *
 * The committed figures change only in a commit that says why (an
 * intended cost, or a saving that lowers them). `--print` prints the
 * figures of this run as guard.json would hold them; nothing is written.
 *
 * Exit: 0 within the figures, 1 beyond them, 2 usage or no valgrind.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { Redis } from 'ioredis';

import { callgrindRunner, haveValgrind, type Row } from './callgrind.ts';
import { hostKeys } from './host.ts';
import type { FloorOpName } from './ops/oauth.ts';
import { deleteMatching } from './redis.ts';
import { int, num } from './report.ts';

/** bench/guard.json */
interface Figures {
  /** Why the figures are what they are (the commit that changed them says it too). */
  why: string;
  warmup: number;
  requests: number;
  margin: number;
  ops: Partial<Record<FloorOpName, { a: number; da: number }>>;
}

const USAGE = `npm run bench:guard [-- options]

  --print             print this run's figures as bench/guard.json would hold them (writes nothing)
  --figures <file>    (bench/guard.json)
  --redis-url <url>   (REDIS_URL, else redis://127.0.0.1:6379)
`;

const { values: args } = parseArgs({
  options: {
    print: { type: 'boolean', default: false },
    figures: { type: 'string' },
    'redis-url': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!haveValgrind()) {
  console.error('bench:guard: valgrind is not installed (Debian: apt-get install valgrind)');
  process.exit(2);
}

const figuresFile = args.figures ?? new URL('./guard.json', import.meta.url);
const figures = JSON.parse(await readFile(figuresFile, 'utf8')) as Figures;
const redisUrl = args['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = (message: string) => console.error(`[guard] ${message}`);
const prefix = `bench-guard:${randomBytes(4).toString('hex')}:`;
const workDir = await mkdtemp(join(tmpdir(), 'bench-guard-'));
const measure = callgrindRunner({ redisUrl, prefix, workDir, common: await hostKeys(), warmup: figures.warmup, requests: figures.requests, log });

const rows: { op: FloorOpName; a: Row; d: Row }[] = [];
const started = Date.now();
try {
  for (const op of Object.keys(figures.ops) as FloorOpName[]) rows.push({ op, a: await measure('A', op), d: await measure('D', op) });
} finally {
  const redis = new Redis(redisUrl);
  await deleteMatching(redis, `${prefix}*`);
  await redis.quit();
  await rm(workDir, { recursive: true, force: true });
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${num(x * 100, 1)} %`;
const failures: string[] = [];
console.log(`Instructions per request on the main thread, ${int(figures.warmup)} warm-up and ${int(figures.requests)} counted requests; margin ${num(figures.margin * 100, 0)} % (bench/guard.json)\n`);
console.log('| Operation | A | committed A | A change | D | D/A | committed D/A | verdict |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const { op, a, d } of rows) {
  const committed = figures.ops[op]!;
  const da = d.main / a.main;
  const ceiling = committed.a * (1 + figures.margin);
  const floor = committed.da * (1 - figures.margin);
  const problems = [
    a.main > ceiling && `A ${int(a.main)} > ${int(ceiling)} (${int(committed.a)} + ${num(figures.margin * 100, 0)} %)`,
    da < floor && `D/A ${num(da, 3)} < ${num(floor, 3)} (${num(committed.da, 3)} − ${num(figures.margin * 100, 0)} %)`,
  ].filter((p): p is string => Boolean(p));
  failures.push(...problems.map((p) => `${op}: ${p}`));
  console.log(`| ${op} | ${int(a.main)} | ${int(committed.a)} | ${pct(a.main / committed.a - 1)} | ${int(d.main)} | ${num(da, 3)} | ${num(committed.da, 3)} | ${problems.length ? '✗' : '✓'} |`);
}
console.log(`\n(${Math.round((Date.now() - started) / 1000)} s)`);
if (args.print) {
  const printed: Figures = { ...figures, ops: Object.fromEntries(rows.map(({ op, a, d }) => [op, { a: Math.round(a.main), da: Number((d.main / a.main).toFixed(3)) }])) };
  console.log(`\n${JSON.stringify(printed, null, 2)}`);
}
if (failures.length) {
  console.log(`\nbench:guard FAILED: the plugin's work per request grew beyond the committed figures:\n${failures.map((f) => `- ${f}`).join('\n')}\nFind what runs on every request now (npm run bench:instructions -- --names); change bench/guard.json only in a commit that says why.`);
  process.exit(1);
}
console.log('\nbench:guard passed.');
