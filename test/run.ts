/**
 * `npm test`: finds a Redis (REDIS_URL, else 127.0.0.1:6379, else a throwaway
 * redis-server on a free port), then runs mocha with REDIS_URL set over
 * every `*.test.ts` under test/ (.mocharc.json): test/conformance/ (the
 * OpenID Foundation's logout plans, over TLS) included, on the single node only.
 *
 * Then the Cluster pass: a 6-node Redis Cluster of its own (test/helpers/cluster.ts)
 * and mocha again over CLUSTER_SUITE with REDIS_CLUSTER set, so the shared
 * suites run on the Cluster. It runs on a full `npm test` whenever
 * redis-server is installed (CI installs it), and with `--cluster` alone:
 * `npm run test:file -- --cluster test/e2e/notify-requests.test.ts`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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
  'test/store/accounts.test.ts',
  'test/store/logout-outcome.test.ts',
  'test/queue/kit.test.ts',
  'test/queue/counts.test.ts',
  'test/store/session-expiry-scripts.test.ts',
  'test/e2e/shared-signals.test.ts',
  'test/e2e/shared-signals-outcomes.test.ts',
  'test/e2e/shared-signals-durable.test.ts',
  'test/e2e/delete-account.test.ts',
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
const mochaArgs = args.filter((a) => a !== '--cluster');
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

let current: ChildProcess | undefined;
let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
const stop = async () => {
  redis.child?.kill();
  await cluster?.close();
};
process.on('SIGINT', () => { current?.kill('SIGINT'); });

function mocha(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  current = spawn(process.execPath, [`${root}node_modules/mocha/bin/mocha.js`, ...argv], { cwd: root, stdio: 'inherit', env });
  return new Promise((resolve) => current!.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

let failed = 0;
if (!clusterOnly) failed += await mocha(mochaArgs, { ...process.env, REDIS_URL: redis.url });
if (clusterOnly || mochaArgs.length === 0) {
  if (!hasRedisServer) {
    console.error('npm test: the Cluster suite needs redis-server (Debian: apt-get install -y redis-server); it did not run.');
    if (clusterOnly) failed += 1;
  } else {
    const started = Date.now();
    try {
      cluster = await startCluster();
      console.log(`npm test: Cluster pass on a 6-node Redis Cluster of its own (${cluster.spec})`);
      const files = clusterOnly && mochaArgs.some((a) => !a.startsWith('-')) ? mochaArgs : [...mochaArgs, ...CLUSTER_SUITE];
      failed += await mocha([...MOCHA_ARGS, ...files.filter((a) => !MOCHA_ARGS.includes(a))], { ...process.env, REDIS_URL: redis.url, REDIS_CLUSTER: cluster.spec });
    } catch (err) {
      console.error(`npm test: the Cluster pass could not run: ${(err as Error).message}`);
      failed += 1;
    }
    console.log(`npm test: Cluster pass took ${Math.round((Date.now() - started) / 1000)} s`);
  }
}
await stop();
process.exit(failed ? 1 : 0);
