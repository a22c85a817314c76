/**
 * The package as a host team meets it: `npm pack` of this repository, the
 * tarball installed with oidc-provider and ioredis into a fresh ESM app, the
 * README's snippets written into that app as files, and the app's processes
 * started on a chosen Node with a clean environment (no loader, no
 * NODE_OPTIONS, nothing of this repository's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The other Nodes the JavaScript host runs on, besides this project's own 22:
 * the registry's `node` package, installed into the app. 22.11.0 is the
 * floor `engines` names (the first 22 LTS, as oidc-provider requires).
 */
export const NODE_24 = '24.21.0';
export const NODE_22_FLOOR = '22.11.0';

/** What `npm pack --json` says of the tarball. */
export interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}

export interface Ran { code: number | null; stdout: string; stderr: string }

/** A host process's environment: enough to run, nothing of npm's or this repository's (no NODE_OPTIONS). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_EXTRA_CA_CERTS'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

/** npm's environment: the machine's (registry, certificates, cache), without what `npm test` set for this package. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_)/.test(name) || ['INIT_CWD', 'NODE_OPTIONS', 'npm_config_local_prefix'].includes(name)) continue;
    env[name] = value;
  }
  return env;
}

export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took more than ${options.timeoutMs} ms\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** npm as `npm test` runs it (npm_execpath), on this Node; fails with npm's own words. */
export async function npm(args: string[], cwd: string): Promise<Ran> {
  const cli = process.env.npm_execpath;
  const env = npmEnv();
  const ran = cli ? await run(process.execPath, [cli, ...args], { cwd, env }) : await run('npm', args, { cwd, env });
  if (ran.code !== 0) throw new Error(`npm ${args.join(' ')} failed (${ran.code}):\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** The version of a package this repository's tests ran with (the lock file's). */
export function lockedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The code block the README marks with `<!-- host-file: <name> ... -->` (a
 * host's file; `site-file` for a relying site's): the fenced block right
 * after the marker, exactly as a reader copies it.
 */
export function readmeBlock(name: string, marker: 'host-file' | 'site-file' = 'host-file'): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`<!-- ${marker}: ${name}`);
  if (at < 0) throw new Error(`README.md has no block marked ${marker}: ${name}`);
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md: no code block after the ${marker}: ${name} marker`);
  return block[1]!;
}

export interface HostApp {
  /** The app's folder (package.json, node_modules, the host's files). */
  dir: string;
  /** The TypeScript host's folder inside it. */
  tsDir: string;
  pack: PackResult;
  tarball: string;
  /** The Node binaries installed into the app. */
  node24: string;
  node22Floor: string;
  remove(): void;
}

/**
 * Packs this repository (prepack builds it), then installs the tarball into
 * a new app as a host would: `npm install <tarball> oidc-provider ioredis`,
 * plus Koa and koa-mount (the README's app.js mounts the provider), TypeScript
 * and the types a TypeScript host has, and Node 24.
 */
export async function createHostApp(): Promise<HostApp> {
  const base = mkdtempSync(join(tmpdir(), 'osn-consumer-'));
  const packed = await npm(['pack', '--json', '--pack-destination', base], ROOT);
  const pack = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as PackResult[])[0]!;
  const tarball = join(base, pack.filename);

  const dir = join(base, 'app');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'host-app', private: true, type: 'module' }, null, 2)}\n`);
  await npm([
    'install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error',
    tarball,
    `oidc-provider@${lockedVersion('oidc-provider')}`,
    `ioredis@${lockedVersion('ioredis')}`,
    `koa@${lockedVersion('koa')}`,
    `koa-mount@${lockedVersion('koa-mount')}`,
    `typescript@${lockedVersion('typescript')}`,
    `@types/node@${lockedVersion('@types/node')}`,
    `@types/oidc-provider@${lockedVersion('@types/oidc-provider')}`,
    `@types/nodemailer@${lockedVersion('@types/nodemailer')}`,
    `node@${NODE_24}`,
    `node-22-floor@npm:node@${NODE_22_FLOOR}`,
  ], dir);

  // The JavaScript host: the README's snippets as files, beside the host's own.
  writeFileSync(join(dir, 'provider.js'), readmeBlock('provider.js'));
  writeFileSync(join(dir, 'letter-worker.js'), readmeBlock('letter-worker.js'));
  writeFileSync(join(dir, 'app.js'), readmeBlock('app.js'));
  cpSync(join(ROOT, 'test/package/host'), dir, { recursive: true });
  // The TypeScript host: the same snippets as .ts files, with typed parts of its own.
  const tsDir = join(dir, 'ts');
  cpSync(join(ROOT, 'test/package/host-ts'), tsDir, { recursive: true });
  writeFileSync(join(tsDir, 'provider.ts'), readmeBlock('provider.js'));
  writeFileSync(join(tsDir, 'letter-worker.ts'), readmeBlock('letter-worker.js'));

  return {
    dir, tsDir, pack, tarball,
    node24: join(dir, 'node_modules/node/bin/node'),
    node22Floor: join(dir, 'node_modules/node-22-floor/bin/node'),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

export interface HostProcess {
  child: ChildProcess;
  /** Everything it printed, stdout and stderr, line by line. */
  lines: string[];
  /** Resolves with the first line (printed or still to come) that matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts `node <script>` in the app with only `env` (and PATH, HOME). */
export function startHostProcess(app: HostApp, node: string, script: string, env: Record<string, string>): HostProcess {
  const child = spawn(node, [script], { cwd: app.dir, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const take = (data: Buffer) => {
    lines.push(...data.toString().split('\n').filter(Boolean));
    for (const wake of waiters) wake();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    for (const wake of waiters) wake();
    resolve(code);
  }));
  return {
    child, lines, exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = lines.find((l) => pattern.test(l));
          if (line !== undefined) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(line);
          } else if (child.exitCode !== null) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`${script} exited (${child.exitCode}) before printing ${pattern}:\n${lines.join('\n')}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${script} printed no ${pattern} in ${timeoutMs} ms:\n${lines.join('\n')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
