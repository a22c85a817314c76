/**
 * `npm run mutate [-- <module> ...]`: mutation testing with Stryker (its
 * mocha runner, TypeScript sources as the tests run them) of the modules in
 * ./modules.ts, all of them when none is named, on the Redis the tests use.
 * Writes each module's HTML and JSON report and a summary of the scores to
 * test/mutation/results/<date>/ (`--out <dir>` elsewhere), to be committed
 * like the benchmark's results. Not part of `npm test`: a module takes
 * minutes to an hour.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startCluster } from '../helpers/cluster.ts';
import { findRedis } from '../helpers/find-redis.ts';
import { mergeReports, writeMerged, type Report } from './merge.ts';
import { MODULES, type MutationModule } from './modules.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args.splice(outAt, 2)[1]! : join(root, 'test/mutation/results', new Date().toISOString().slice(0, 10));
const unknown = args.filter((name) => !MODULES.some((m) => m.name === name));
if (unknown.length) {
  console.error(`npm run mutate: unknown module ${unknown.join(', ')}; known: ${MODULES.map((m) => m.name).join(', ')}`);
  process.exit(2);
}
const chosen = args.length ? MODULES.filter((m) => args.includes(m.name)) : MODULES;

interface Score { name: string; killed: number; timeout: number; survived: number; noCoverage: number; ignored: number; errors: number; score: number }

/** Stryker's counts from its JSON report (mutation-testing-report-schema). */
function score(name: string, reportFile: string): Score {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { files: Record<string, { mutants: { status: string }[] }> };
  const count = (status: string) => Object.values(report.files).flatMap((f) => f.mutants).filter((m) => m.status === status).length;
  const s = {
    name, killed: count('Killed'), timeout: count('Timeout'), survived: count('Survived'), noCoverage: count('NoCoverage'),
    ignored: count('Ignored'), errors: count('CompileError') + count('RuntimeError'),
  };
  const valid = s.killed + s.timeout + s.survived + s.noCoverage;
  return { ...s, score: valid ? (100 * (s.killed + s.timeout)) / valid : 100 };
}

/** One Stryker run of a module: its spec on the Redis in `env`, reports at `<report>.json` and `.html`. */
function runStryker(module: MutationModule, spec: string[], report: string, env: NodeJS.ProcessEnv): Promise<number> {
  const config = {
    testRunner: 'mocha',
    plugins: ['@stryker-mutator/mocha-runner'],
    mutate: module.mutate,
    mochaOptions: { spec, config: '.mocharc.json' },
    coverageAnalysis: 'perTest',
    reporters: ['clear-text', 'progress', 'json', 'html'],
    jsonReporter: { fileName: `${report}.json` },
    htmlReporter: { fileName: `${report}.html` },
    // One sandbox per run, so modules can be mutation-tested side by side.
    tempDirName: join('.stryker-tmp', basename(report)),
    cleanTempDir: 'always',
    concurrency: 1,
    maxTestRunnerReuse: module.freshProcess ? 1 : 0,
    timeoutMS: 20_000,
    disableTypeChecks: '{src,adapters,views,examples}/**/*.ts',
  };
  const file = join(root, '.stryker-tmp', `${basename(report)}.conf.json`);
  mkdirSync(join(root, '.stryker-tmp'), { recursive: true });
  writeFileSync(file, JSON.stringify(config, null, 2));
  const preload = join(root, 'test/mutation/cjs-extension.cjs');
  const child = spawn(process.execPath, [join(root, 'node_modules/@stryker-mutator/core/bin/stryker.js'), 'run', file], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() },
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

const readReport = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Report;

/**
 * A module with a Cluster spec runs twice, on the single node and on a
 * 6-node Cluster started for it; its report is the two merged (killed in
 * either run), beside each run's own JSON (`.redis.json`, `.cluster.json`).
 */
async function mutateModule(module: MutationModule, redisUrl: string): Promise<boolean> {
  const base = join(out, module.name);
  if (!module.clusterSpec) return (await runStryker(module, module.spec, base, { REDIS_URL: redisUrl })) === 0;
  if ((await runStryker(module, module.spec, `${base}.redis`, { REDIS_URL: redisUrl })) !== 0) return false;
  const cluster = await startCluster();
  try {
    console.log(`npm run mutate: ${module.name} again on a Redis Cluster of its own (${cluster.spec})`);
    if ((await runStryker(module, module.clusterSpec, `${base}.cluster`, { REDIS_URL: redisUrl, REDIS_CLUSTER: cluster.spec })) !== 0) return false;
  } finally {
    await cluster.close();
  }
  writeMerged(mergeReports(readReport(`${base}.redis.json`), readReport(`${base}.cluster.json`)), `${base}.json`, `${base}.redis.html`, `${base}.html`);
  // The merged page is the one to read; each run's JSON stays for the record.
  for (const layout of ['redis', 'cluster']) rmSync(`${base}.${layout}.html`);
  return true;
}

const redis = await findRedis();
mkdirSync(out, { recursive: true });
const scores: Score[] = [];
let failed = false;
try {
  for (const module of chosen) {
    console.log(`npm run mutate: ${module.name} (${module.mutate.join(', ')})`);
    if (!(await mutateModule(module, redis.url))) {
      failed = true;
      continue;
    }
    scores.push(score(module.name, join(out, `${module.name}.json`)));
  }
} finally {
  redis.child?.kill();
}
const lines = [
  '| Module | Killed | Timeout | Survived | No coverage | Equivalent (ignored) | Errors | Score |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...scores.map((s) => `| ${s.name} | ${s.killed} | ${s.timeout} | ${s.survived} | ${s.noCoverage} | ${s.ignored} | ${s.errors} | ${s.score.toFixed(1)} % |`),
];
const summary = join(out, 'scores.md');
const previous = (() => { try { return readFileSync(summary, 'utf8'); } catch { return ''; } })();
const kept = previous.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Module') && !scores.some((s) => l.startsWith(`| ${s.name} |`)));
writeFileSync(summary, `# Mutation scores\n\nScore: (killed + timeout) / (killed + timeout + survived + no coverage); equivalent mutants are marked in the sources with their reason and excluded.\n\n${[lines[0], lines[1], ...kept, ...lines.slice(2)].join('\n')}\n`);
console.log(`\n${lines.join('\n')}\n\nwritten to ${out}`);
process.exit(failed ? 1 : 0);
