/**
 * `npm run bench:instructions`: CPU instructions per request of A, B and D
 * (bench/run.ts names them), counted by valgrind's callgrind, for the
 * operations whose rate goals compare A with D (docs/performance.md "Goals").
 *
 * Why: a rate on this project's kind of machine moves by a third from one
 * round to the next (the hypervisor, the other guest), more than the gaps it
 * is meant to show. Instructions executed move far less: the same server,
 * requests and warm-up give the same count within about 8 % from run to run
 * (when V8 collects garbage and what it has optimized by then still vary),
 * whatever else the machine does. They are not time (a cache miss costs more
 * than an add, the kernel's work in system calls is not counted), but they
 * show which server does more work, and how much, where rates cannot.
 *
 * How: bench/callgrind.ts runs each server under callgrind in a process of
 * its own (the same bench/server-process.ts as `npm run bench`), warms it up,
 * and counts `--requests` requests made one at a time, thread by thread.
 *
 * Writes bench/results/<date>-<HHMM>-instructions[-d-reads-as-a][-names].md
 * (bench/results-index.ts) and updates the index beside it.
 *
 * Needs valgrind (Debian's package `valgrind`; every machine of this
 * project's kind has it). Takes 4 to 8 minutes per server and operation
 * (a refresh mints a fresh token per request).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Redis } from 'ioredis';

import { areaOf } from './callgrind-names.ts';
import { callgrindRunner, haveValgrind, type Name, type Row } from './callgrind.ts';
import { hostKeys } from './host.ts';
import { HTTP_OPS, type FloorOpName } from './ops/oauth.ts';
import { deleteMatching } from './redis.ts';
import { check, int, num } from './report.ts';
import { resultsStem, startedText, writeIndex } from './results-index.ts';

const OPS = ['introspect', 'introspect-revoked', 'refresh', 'code', 'revoke'] as const satisfies readonly FloorOpName[];
const USAGE = `npm run bench:instructions [-- options]

  --ops <list>        comma-separated, of: ${OPS.join(',')} (introspect,refresh)
  --servers <list>    of A, B, D (A,B,D)
  --requests <n>      requests counted per server and operation (1000)
  --warmup <n>        requests before counting, so V8 has optimized the hot code (5000)
  --d-reads-as-a      introspection: D sends A's own token read (the same script, on one of A's records,
                      made by an A run outside valgrind) instead of its PING
  --names             name V8's compiled code (node --perf-basic-prof) and report, per function and by
                      area, where A executes more than B and D
  --redis-url <url>   (REDIS_URL, else redis://127.0.0.1:6379)
  --out <dir>         (bench/results)
`;

const { values: args } = parseArgs({
  options: {
    ops: { type: 'string', default: 'introspect,refresh' },
    servers: { type: 'string', default: 'A,B,D' },
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '5000' },
    'd-reads-as-a': { type: 'boolean', default: false },
    names: { type: 'boolean', default: false },
    'redis-url': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const fail = (message: string): never => {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
};
const count = (name: string, raw: string) => (/^[1-9]\d*$/.test(raw) ? Number(raw) : fail(`--${name} must be a positive integer`));
const ops = args.ops.split(',').map((o) => (OPS as readonly string[]).includes(o) ? o as FloorOpName : fail(`unknown operation ${o}`));
const servers = args.servers.split(',').map((s) => ['A', 'B', 'D'].includes(s) ? s as Name : fail(`unknown server ${s}`));
const requests = count('requests', args.requests);
const warmup = count('warmup', args.warmup);
const dReadsAsA = args['d-reads-as-a'];
const names = args.names;
const redisUrl = args['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const outDir = args.out ?? fileURLToPath(new URL('./results', import.meta.url));

if (!haveValgrind()) fail('valgrind is not installed (Debian: apt-get install valgrind)');

const log = (message: string) => console.error(`[instructions] ${message}`);
const startedAt = new Date();
const prefix = `bench-instr:${randomBytes(4).toString('hex')}:`;
const common = await hostKeys();
const workDir = await mkdtemp(join(tmpdir(), 'bench-instructions-'));

const measure = callgrindRunner({ redisUrl, prefix, workDir, common, warmup, requests, names, dReadsAsA, log });

const rows: Row[] = [];
try {
  for (const op of ops) for (const server of servers) rows.push(await measure(server, op));
} finally {
  const redis = new Redis(redisUrl);
  await deleteMatching(redis, `${prefix}*`);
  await redis.quit();
  await rm(workDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- report

/** A function's name for the table: paths from the project's folders on, C++ signatures cut short. */
function shortName(name: string): string {
  const short = name.replace(/file:\/\/|\/[^ ]*\/(?=node_modules|src|adapters)/g, '').replaceAll('|', '\\|');
  return short.length > 110 ? `${short.slice(0, 107)}…` : short;
}

/** --names: per operation, where A's main thread executes more than B's and D's, by area and by function. */
function whereAMore(): string[] {
  const out: string[] = [];
  const fmt = (n: number) => int(Math.round(n));
  for (const op of ops) {
    const a = of(op, 'A');
    for (const other of [of(op, 'B'), of(op, 'D')]) {
      if (!a?.functions || !other?.functions) continue;
      const diff = (x: Map<string, number>, y: Map<string, number>) =>
        [...new Set([...x.keys(), ...y.keys()])].map((k) => ({ name: k, a: x.get(k) ?? 0, b: y.get(k) ?? 0 }));
      const byArea = (m: Map<string, number>) => {
        const areas = new Map<string, number>();
        for (const [k, v] of m) areas.set(areaOf(k), (areas.get(areaOf(k)) ?? 0) + v);
        return areas;
      };
      const areas = diff(byArea(a.functions), byArea(other.functions)).sort((x, y) => (y.a - y.b) - (x.a - x.b));
      const functions = diff(a.functions, other.functions).sort((x, y) => (y.a - y.b) - (x.a - x.b)).slice(0, 20);
      out.push(
        `### ${HTTP_OPS[op].title}: where A executes more than ${other.server}`,
        '',
        `Own instructions per request on the main thread (a function's self cost, not what it calls), named with V8's code map. Code V8 compiled and dropped again before the dump is \"unnamed code\"; the frames below the event loop, whose own share the dump cannot tell, are left out, so the rows add up to a little less than the totals above.`,
        '',
        `| Area | A | ${other.server} | A − ${other.server} |`,
        '|---|---:|---:|---:|',
        ...areas.map((r) => `| ${r.name} | ${fmt(r.a)} | ${fmt(r.b)} | ${fmt(r.a - r.b)} |`),
        '',
        `| Function | A | ${other.server} | A − ${other.server} |`,
        '|---|---:|---:|---:|',
        ...functions.map((r) => `| ${shortName(r.name)} | ${fmt(r.a)} | ${fmt(r.b)} | ${fmt(r.a - r.b)} |`),
        '',
      );
    }
  }
  return out;
}

const of = (op: FloorOpName, server: Name) => rows.find((r) => r.op === op && r.server === server);
const ratio = (a: number | undefined, b: number | undefined) => (a && b ? num(b / a, 2) : '—');
/** The goal in instructions (docs/performance.md "Goals"): A's main thread within 5 % of D's, D/A ≥ 0.95, where D ran. */
const goal = (a: Row, d: Row | undefined) => (d ? check(d.main / a.main >= 0.95) : '');
const lines = [
  `# Instructions per request, ${startedText(startedAt)}`,
  '',
  `\`npm run bench:instructions -- --ops ${ops.join(',')} --servers ${servers.join(',')} --requests ${requests} --warmup ${warmup}${dReadsAsA ? ' --d-reads-as-a' : ''}${names ? ' --names' : ''}\`: valgrind's callgrind, one request at a time on one keep-alive connection, after ${int(warmup)} warm-up requests; Node ${process.version}. A, B and D are \`npm run bench\`'s servers (D: B plus A's N Redis round trips as PINGs${dReadsAsA ? '; on introspection A\'s own token read instead, on one of A\'s records' : ''}). "Main": the server's thread; "others": V8's helper threads (garbage collection, the optimizing compiler) and the thread pool. B/A and D/A: the instructions of B or D over A's, on the main thread and on all threads: the rate A would reach beside B or D if time followed instructions (it does not quite: see bench/instructions.ts). The goal is D/A ≥ 0.95 on the main thread: the plugin's own work beyond its round trips within 5 % of D's (docs/performance.md \"Goals\"); B/A is shown, not judged. The other threads carry work of every server (the ID token's RS256 signature runs in the thread pool) and work that depends on timing (what the optimizing compiler still does, concurrent garbage collection): the main thread's figures repeat within about 8 %, theirs do not.`,
  '',
  '| Operation | Server | Main thread instructions/req | Others/req | B/A main | D/A main | B/A all threads | D/A all threads | D/A main ≥ 0.95 |',
  '|---|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map((r) => {
    const [b, d] = [of(r.op, 'B'), of(r.op, 'D')];
    const all = (x: Row | undefined) => x && x.main + x.others;
    const ratios = r.server === 'A' ? [ratio(r.main, b?.main), ratio(r.main, d?.main), ratio(all(r), all(b)), ratio(all(r), all(d)), goal(r, d)] : ['', '', '', '', ''];
    return `| ${HTTP_OPS[r.op].title} | ${r.server} | ${int(r.main)} | ${int(r.others)} | ${ratios.join(' | ')} |`;
  }),
  '',
];
if (names) lines.push(...whereAMore());
const report = lines.join('\n');
console.log(report);
const variant = [dReadsAsA && 'd-reads-as-a', names && 'names'].filter(Boolean).join('-');
const file = join(outDir, `${resultsStem(startedAt, 'instructions', variant)}.md`);
// An --out directory that does not exist yet is made (the run takes minutes: losing its report to ENOENT costs them).
await mkdir(outDir, { recursive: true });
await writeFile(file, report);
await writeIndex(outDir);
log(`wrote ${file}`);
