/**
 * `npm run test:stress`: the first tier (`npm test`, Cluster pass included)
 * twice at once on this machine, as a loaded CI runs it. Each run's output
 * goes to a file of its own (named at the end); passes when both pass.
 * Both share the Redis `npm test` finds (every test file keys under a prefix
 * of its own) and start Clusters of their own on free ports.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'osn-stress-'));
const started = Date.now();

const runs = [1, 2].map((n) => {
  const log = join(dir, `run-${n}.log`);
  const out = createWriteStream(log);
  const child = spawn(process.execPath, [join(root, 'test/run.ts'), ...process.argv.slice(2)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  return new Promise<{ n: number; log: string; code: number; seconds: number }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ n, log, code: code ?? (signal ? 1 : 0), seconds: Math.round((Date.now() - started) / 1000) }));
  });
});
process.on('SIGINT', () => {});

const done = await Promise.all(runs);
for (const r of done) {
  // Mocha's counts of each pass, as the run printed them.
  const counts = [...readFileSync(r.log, 'utf8').matchAll(/^\s+(\d+ (?:passing|failing|pending)).*$/gm)].map((m) => m[1]).join(', ');
  console.log(`test:stress: run ${r.n} ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`} in ${r.seconds} s (${counts}); its output: ${r.log}`);
}
process.exit(done.some((r) => r.code !== 0) ? 1 : 0);
