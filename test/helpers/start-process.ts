/**
 * `node examples/start.ts` as a newcomer runs it, as a child process of the
 * test: its output kept, waited for, and the process ended again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/** Variables start.ts reads; the newcomer has none of them set. */
const SETTINGS = ['PORT', 'ISSUER', 'REDIS_URL', 'SMTP_URL', 'MAIL_FROM', 'CONFIG_FILE', 'JWKS_FILE', 'JWKS', 'COOKIE_KEYS', 'TRUST_PROXY', 'SERVICE_NAME', 'DEMO_PORT', 'ALLOW_PRIVATE_FETCH_HOSTS', 'MAIL_OUTBOX'];

export interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const runs = new Set<Run>();

/** `node examples/start.ts` from the repository root, as a newcomer runs it. */
export function start(env: Record<string, string>): Run {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SETTINGS) delete base[name];
  const child = spawn(process.execPath, ['examples/start.ts'], {
    cwd: root,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let both = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; both += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; both += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const run: Run = { child, stdout: () => out, stderr: () => err, output: () => both, exited };
  runs.add(run);
  return run;
}

/** Ends a process a test started: SIGTERM, then SIGKILL if it lingers. */
export async function stop(run: Run): Promise<void> {
  runs.delete(run);
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 3000);
  await run.exited;
  clearTimeout(timer);
}

/** Ends every process the tests started and did not end. */
export async function stopAll(): Promise<void> {
  await Promise.all([...runs].map(stop));
}

/** Waits until the process output matches, failing early if it exits. */
export async function waitForOutput(run: Run, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(`start.ts exited (${run.child.exitCode ?? run.child.signalCode}) before printing ${pattern}:\n${run.output()}`);
    }
    if (Date.now() > deadline) throw new Error(`start.ts did not print ${pattern} within ${timeoutMs} ms:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * How long a start.ts that refuses its configuration may take to exit: Node's
 * start and the modules' loading take a second or two on an idle machine and
 * several times that on a loaded one (two suites at once); a process that
 * would serve instead never exits, so the bound only needs to end the wait.
 */
export const REFUSAL_MS = 20_000;

/** Waits for the process to exit on its own within `ms`; kills it and fails otherwise. */
export async function exitWithin(run: Run, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); });
  const result = await Promise.race([run.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    await stop(run);
    throw new Error(`start.ts still running after ${ms} ms:\n${run.output()}`);
  }
  runs.delete(run);
  return result;
}
