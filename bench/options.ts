/**
 * `npm run bench`'s options: what to run, how long, on which servers
 * (`npm run bench -- --help` prints USAGE), and the kind of run they make
 * (bench/results-index.ts names the results by it).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import type { RunKind } from './results-index.ts';

export const ALL_OPS = ['introspect', 'introspect-revoked', 'refresh', 'code', 'revoke', 'race', 'notify', 'letters', 'text', 'ioredis', 'memory', 'growth', 'adoption'] as const;
export type OpName = typeof ALL_OPS[number];

const USAGE = `npm run bench [-- options]

  --duration <s>          seconds per timed run (10; --quick 2)
  --connections <n>       autocannon connections (10)
  --rounds <n>            timed runs per server and operation, A, B, C and D taking turns (5; --quick 1)
  --warmup <n>            warm-up requests per server and operation, so V8 has optimized the hot code (6000; --quick 300)
  --ops <list>            comma-separated, of: ${ALL_OPS.join(',')} (all)
  --sequential <n>        one-at-a-time requests for round trips and commands (200; --quick 30)
  --notify-rate <n>       requests/s for the /api/notify latency target, with the letter worker sending (2500)
  --race-trials <n>       refresh race: trials per server, each 20 concurrent refreshes with one token (20; --quick 5)
  --no-c                  leave out C (oidc-provider on the naive Redis adapter)
  --no-d                  leave out D (B plus A's Redis round trips as PINGs, the floor)
  --d-reads-as-a          operation 1: D sends A's own token read (the same script, on one of A's records) instead of its PING
  --worker-in-process     5b: the letter worker in A's process (default: a process of its own, as docs/operations.md advises)
  --worker-nice <n>       5b: the worker process' nice value, 0 to 19 (10: below the server, as docs/operations.md advises on shared cores)
  --letters <n>           letters for the worker run (2000; --quick 200)
  --letter-concurrency <n> the plugin's letters.concurrency (4, its default)
  --memory-count <n>      records per kind for memory per record (10000; --quick 1000)
  --growth-tokens <n>     live tokens written for the large growth level (1000000; --quick 100000)
  --profile               CPU-profile every server during every HTTP operation, not only A and the server a missed target compares it with
  --auto-pipelining       give A's ioredis client enableAutoPipelining (the host's option; off by default)
  --redis-url <url>       (REDIS_URL, else redis://127.0.0.1:6379)
  --out <dir>             (bench/results)
  --quick                 a short smoke run (2-3 minutes)
`;

export interface BenchOptions {
  quick: boolean;
  duration: number;
  connections: number;
  rounds: number;
  warmup: number;
  sequential: number;
  notifyRate: number;
  raceTrials: number;
  withC: boolean;
  withD: boolean;
  dReadsAsA: boolean;
  workerInProcess: boolean;
  workerNice: number;
  letters: number;
  letterConcurrency: number;
  memoryCount: number;
  growthTokens: number;
  profile: boolean;
  autoPipelining: boolean;
  redisUrl: string;
  out: string;
  ops: ReadonlySet<OpName>;
}

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) usageError(`--${name}: must be a positive number, got "${raw}"`);
  return n;
}

function niceValue(value: string | undefined): number {
  if (value === undefined) return 10;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) usageError('--worker-nice must be an integer from 0 to 19');
  return n;
}

/** The options of this process' command line; prints the usage and exits on --help or a bad value. */
export function benchOptions(): BenchOptions {
  const { values: args } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      ops: { type: 'string' },
      sequential: { type: 'string' },
      'notify-rate': { type: 'string' },
      'race-trials': { type: 'string' },
      'no-c': { type: 'boolean', default: false },
      'no-d': { type: 'boolean', default: false },
      'worker-in-process': { type: 'boolean', default: false },
      'worker-nice': { type: 'string' },
      'd-reads-as-a': { type: 'boolean', default: false },
      letters: { type: 'string' },
      'letter-concurrency': { type: 'string' },
      'memory-count': { type: 'string' },
      'growth-tokens': { type: 'string' },
      profile: { type: 'boolean', default: false },
      'auto-pipelining': { type: 'boolean', default: false },
      'redis-url': { type: 'string' },
      out: { type: 'string' },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (args.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const ops = new Set<OpName>();
  for (const name of (args.ops ?? ALL_OPS.join(',')).split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(ALL_OPS as readonly string[]).includes(name)) usageError(`--ops: unknown operation "${name}"`);
    ops.add(name as OpName);
  }
  const quick = args.quick;
  return {
    quick,
    duration: positive('duration', args.duration, quick ? 2 : 10),
    connections: Math.round(positive('connections', args.connections, 10)),
    // Five: rates here move by a third from round to round, and a median of five stands two slow rounds.
    rounds: Math.round(positive('rounds', args.rounds, quick ? 1 : 5)),
    warmup: Math.round(positive('warmup', args.warmup, quick ? 300 : 6000)),
    sequential: Math.round(positive('sequential', args.sequential, quick ? 30 : 200)),
    notifyRate: Math.round(positive('notify-rate', args['notify-rate'], 2500)),
    raceTrials: Math.round(positive('race-trials', args['race-trials'], quick ? 5 : 20)),
    withC: !args['no-c'],
    withD: !args['no-d'],
    dReadsAsA: args['d-reads-as-a'],
    workerInProcess: args['worker-in-process'],
    workerNice: niceValue(args['worker-nice']),
    letters: Math.round(positive('letters', args.letters, quick ? 200 : 2000)),
    letterConcurrency: Math.round(positive('letter-concurrency', args['letter-concurrency'], 4)),
    memoryCount: Math.round(positive('memory-count', args['memory-count'], quick ? 1000 : 10_000)),
    growthTokens: Math.round(positive('growth-tokens', args['growth-tokens'], quick ? 100_000 : 1_000_000)),
    profile: args.profile,
    autoPipelining: args['auto-pipelining'],
    redisUrl: args['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    out: args.out ?? fileURLToPath(new URL('./results', import.meta.url)),
    ops,
  };
}

/** `full`: every operation on all four servers, not quick, nothing switched that changes what is measured. */
export function runKind(opts: BenchOptions): RunKind {
  const everything = ALL_OPS.every((op) => opts.ops.has(op)) && opts.withC && opts.withD;
  const plain = !opts.quick && !opts.dReadsAsA && !opts.workerInProcess && !opts.autoPipelining;
  return everything && plain ? 'full' : 'partial';
}
