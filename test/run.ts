/**
 * `npm test`: finds a Redis (REDIS_URL, else 127.0.0.1:6379, else a throwaway
 * redis-server on a free port), then runs mocha with REDIS_URL set over
 * every `*.test.ts` under test/: test/conformance/ (the OpenID Foundation's
 * logout plans, over TLS) included, on the single node only.
 *
 * Beside it the Cluster pass: a 6-node Redis Cluster of its own
 * (test/helpers/cluster.ts) and mocha again over CLUSTER_SUITE with
 * REDIS_CLUSTER set, so the shared suites run on the Cluster. It runs on a
 * full `npm test` whenever redis-server is installed (CI installs it), and
 * with `--cluster` alone:
 * `npm run test:file -- --cluster test/e2e/notify-requests.test.ts`.
 *
 * Both passes run their files in parallel (JOBS, CLUSTER_JOBS), then the
 * QUIET files alone (docs/testing.md "Two tiers, and where the time goes").
 *
 * `--scale` (`npm run test:scale`): the same run with OSN_TEST_SCALE=full,
 * the scale tier (test/helpers/scale.ts, docs/testing.md).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { startCluster } from './helpers/cluster.ts';
import { findRedis } from './helpers/find-redis.ts';

/** What runs again on the Cluster, beside test/cluster/*.cluster.ts (Cluster-only tests). */
const CLUSTER_SUITE = [
  'test/adapters/contract.test.ts',
  'test/e2e/notify-requests.test.ts',
  'test/e2e/notify-results.test.ts',
  'test/e2e/notify-limits.test.ts',
  'test/e2e/notify-letter.test.ts',
  'test/e2e/block-site.test.ts',
  'test/e2e/remove-access.test.ts',
  'test/e2e/refresh-theft.test.ts',
  'test/e2e/org-removal.test.ts',
  'test/e2e/sessions.test.ts',
  'test/e2e/last-used.test.ts',
  'test/e2e/theft-notice.test.ts',
  'test/e2e/security-notices-words.test.ts',
  'test/e2e/refresh-leeway.test.ts',
  'test/e2e/ended-stays-ended.test.ts',
  'test/e2e/ended-sessions-and-sites.test.ts',
  'test/e2e/end-site-access.test.ts',
  'test/e2e/refresh-chain-findings.test.ts',
  'test/e2e/token-batch.test.ts',
  'test/e2e/instances.test.ts',
  'test/e2e/backchannel-retry.test.ts',
  'test/e2e/backchannel-durable.test.ts',
  'test/e2e/session-expiry-worker.test.ts',
  'test/e2e/session-expiry.test.ts',
  'test/e2e/sign-in-strength.test.ts',
  'test/e2e/upstream-link-first.test.ts',
  'test/e2e/upstream-signals.test.ts',
  'test/e2e/upstream-signals-two-providers.test.ts',
  'test/store/accounts.test.ts',
  'test/store/logout-outcome.test.ts',
  'test/queue/kit.test.ts',
  'test/queue/counts.test.ts',
  'test/store/session-expiry-scripts.test.ts',
  'test/e2e/shared-signals.test.ts',
  'test/e2e/shared-signals-outcomes.test.ts',
  'test/e2e/shared-signals-durable.test.ts',
  'test/e2e/delete-account.test.ts',
  'test/e2e/backchannel-erased.test.ts',
  'test/e2e/backchannel-once.test.ts',
  'test/e2e/adopt.test.ts',
  'test/e2e/adopt-race.test.ts',
  'test/e2e/adopt-import.test.ts',
  'test/e2e/adopt-costs.test.ts',
  'test/e2e/adopt-import-once.test.ts',
  'test/e2e/adopt-odd-records.test.ts',
  'test/plugin/queues.test.ts',
  'test/store/adopt-scripts.test.ts',
  'test/cluster/*.cluster.ts',
];
const MOCHA_ARGS = ['--no-config', '--extension', 'ts', '--timeout', '30000', '--exit'];

/**
 * A whole run takes test files JOBS at a time in the first pass and
 * CLUSTER_JOBS at a time in the Cluster pass beside it (mocha --parallel).
 * More files than cores: most of a file's time is spent waiting (HTTP, Redis,
 * Chromium, the processes and servers it starts). Files share nothing: each
 * keys under a prefix of its own (uniquePrefix) and starts its servers on
 * free ports. OSN_TEST_JOBS and OSN_TEST_CLUSTER_JOBS change them.
 */
const JOBS = Number(process.env.OSN_TEST_JOBS ?? 4);
const CLUSTER_JOBS = Number(process.env.OSN_TEST_CLUSTER_JOBS ?? 2);
/**
 * The first pass's slowest files (docs/testing.md "Where the time goes"),
 * started first: a parallel run lasts at least as long as its longest file,
 * and one started last would run alone at the end. Then every other file.
 */
const SLOW_FIRST = [
  'test/package/consumer.test.ts',
  'test/e2e/session-expiry.test.ts',
  'test/e2e/ended-sessions-and-sites.test.ts',
  'test/e2e/adopt-import.test.ts',
  'test/e2e/adopt.test.ts',
  'test/e2e/command-exits.test.ts',
  'test/e2e/pages-browser.test.ts',
  'test/e2e/refresh-chain-model.test.ts',
  'test/e2e/startup-issuer.test.ts',
  'test/e2e/backchannel-durable.test.ts',
];
/**
 * Files whose assertions bound wall-clock time under a load they make
 * themselves (served again within 1 s of Redis' restart, a failover's 503s
 * within the bound, SIGTERM's drain): they run after the parallel files,
 * one at a time, so that the suite's own other files are not that load.
 */
const QUIET = ['test/e2e/outage.test.ts', 'test/e2e/sentinel.test.ts', 'test/e2e/operations.test.ts'];
/**
 * The Cluster pass's too, and the file that makes the shared Cluster's
 * masters refuse writes (min-replicas-to-write) for a moment: a file beside
 * it got NOREPLICAS in its cleanup (npm test, 2026-11-29, 1 run in 5).
 */
const CLUSTER_QUIET = ['test/cluster/failover.cluster.ts', 'test/cluster/leeway-unwritten.cluster.ts'];

/** Every `*.test.ts` under test/, the slowest first, QUIET left out (mocha --parallel runs a file named twice twice). */
function firstPassFiles(): string[] {
  const all = readdirSync(`${root}test`, { recursive: true }).map(String).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`).sort();
  return [...new Set([...SLOW_FIRST, ...all])].filter((f) => !QUIET.includes(f));
}

const root = fileURLToPath(new URL('..', import.meta.url));

let redis: Awaited<ReturnType<typeof findRedis>>;
try {
  redis = await findRedis();
} catch (err) {
  console.error(`npm test: ${(err as Error).message}`);
  process.exit(1);
}
console.log(`npm test: Redis at ${redis.url}${redis.child ? ' (throwaway redis-server)' : ''}`);

const args = process.argv.slice(2);
const clusterOnly = args.includes('--cluster');
if (args.includes('--scale')) process.env.OSN_TEST_SCALE = 'full';
const mochaArgs = args.filter((a) => a !== '--cluster' && a !== '--scale');
/** mocha's own arguments given beside the files, less what MOCHA_ARGS already says (test:file repeats it). */
const extra = mochaArgs.filter((a) => !MOCHA_ARGS.includes(a));
/** Files named (`npm run test:file -- <files>`): those alone, one at a time. */
const named = mochaArgs.some((a) => a.endsWith('.ts') || a.includes('*'));
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

const children = new Set<ChildProcess>();
let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
const stop = async () => {
  redis.child?.kill();
  await cluster?.close();
};
process.on('SIGINT', () => { for (const child of children) child.kill('SIGINT'); });

/** Runs mocha; `hold` keeps its output until `print()` (a pass running beside another). */
function mocha(argv: string[], env: NodeJS.ProcessEnv, hold = false): { done: Promise<number>; print(): void } {
  const child = spawn(process.execPath, [`${root}node_modules/mocha/bin/mocha.js`, ...argv], { cwd: root, stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit', env });
  children.add(child);
  const held: Buffer[] = [];
  child.stdout?.on('data', (d: Buffer) => held.push(d));
  child.stderr?.on('data', (d: Buffer) => held.push(d));
  const done = new Promise<number>((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    resolve(code ?? (signal ? 1 : 0));
  }));
  return { done, print: () => process.stdout.write(Buffer.concat(held)) };
}

/** The Cluster pass: a Cluster of its own, then mocha over CLUSTER_SUITE (or the files named) with REDIS_CLUSTER set. */
async function clusterPass(parallel: string[], hold: boolean): Promise<{ failed: number; print(): void }> {
  const started = Date.now();
  const lines: string[] = [];
  const say = (line: string) => { if (hold) lines.push(line); else console.log(line); };
  let failed = 0;
  let print = () => {};
  try {
    cluster = await startCluster();
    say(`npm test: Cluster pass on a 6-node Redis Cluster of its own (${cluster.spec})`);
    const env = { ...process.env, REDIS_URL: redis.url, REDIS_CLUSTER: cluster.spec };
    if (clusterOnly && named) {
      const run = mocha([...MOCHA_ARGS, ...extra], env, hold);
      failed += await run.done;
      print = run.print;
    } else {
      // The shared suites in parallel; the quiet ones alone later (clusterQuiet), once nothing else runs.
      const suite = CLUSTER_SUITE.flatMap((f) => (f === 'test/cluster/*.cluster.ts' ? readdirSync(`${root}test/cluster`).filter((c) => c.endsWith('.cluster.ts')).sort().map((c) => `test/cluster/${c}`) : [f])).filter((f) => !CLUSTER_QUIET.includes(f));
      const shared = mocha([...MOCHA_ARGS, ...parallel, ...extra, ...suite], env, hold);
      failed += await shared.done;
      print = shared.print;
    }
  } catch (err) {
    say(`npm test: the Cluster pass could not run: ${(err as Error).message}`);
    failed += 1;
  }
  const took = `npm test: Cluster pass took ${Math.round((Date.now() - started) / 1000)} s`;
  return { failed, print: () => { for (const line of lines) console.log(line); print(); console.log(took); } };
}

/** The Cluster pass's quiet files, alone, on the Cluster the pass started. */
async function clusterQuiet(): Promise<number> {
  if (!cluster) return 0;
  console.log('npm test: the Cluster pass\'s quiet files, alone');
  return mocha([...MOCHA_ARGS, ...extra, ...CLUSTER_QUIET], { ...process.env, REDIS_URL: redis.url, REDIS_CLUSTER: cluster.spec }).done;
}

let failed = 0;
const noCluster = 'npm test: the Cluster suite needs redis-server (Debian: apt-get install -y redis-server); it did not run.';
if (named || clusterOnly) {
  // Files named, or --cluster: one pass after the other, one file at a time (what test:file is for).
  if (!clusterOnly) failed += await mocha(mochaArgs, { ...process.env, REDIS_URL: redis.url }).done;
  if (clusterOnly) {
    if (!hasRedisServer) {
      console.error(noCluster);
      failed += 1;
    } else {
      const pass = await clusterPass([], false);
      failed += pass.failed;
      if (!named) failed += await clusterQuiet();
    }
  }
} else {
  // The whole suite: the first pass and the Cluster pass side by side, each over files in parallel, then its quiet files alone.
  const started = Date.now();
  const env = { ...process.env, REDIS_URL: redis.url };
  const second = hasRedisServer ? clusterPass(['--parallel', '--jobs', String(CLUSTER_JOBS)], true) : undefined;
  failed += await mocha([...MOCHA_ARGS, '--parallel', '--jobs', String(JOBS), ...extra, ...firstPassFiles()], env).done;
  console.log(`npm test: first pass (in parallel) took ${Math.round((Date.now() - started) / 1000)} s`);
  if (second) {
    const pass = await second;
    pass.print();
    failed += pass.failed;
  } else {
    console.error(noCluster);
  }
  const quietFrom = Date.now();
  console.log('npm test: the quiet files, alone');
  failed += await mocha([...MOCHA_ARGS, ...extra, ...QUIET], env).done;
  failed += await clusterQuiet();
  console.log(`npm test: the quiet files took ${Math.round((Date.now() - quietFrom) / 1000)} s`);
  console.log(`npm test: ${Math.round((Date.now() - started) / 1000)} s in all`);
}
await stop();
process.exit(failed ? 1 : 0);
