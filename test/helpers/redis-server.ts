/**
 * redis-server processes the tests own: on a free loopback port, in a
 * temporary directory of their own, killed and removed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from './net.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends one inline command and resolves with the first reply line, or undefined when nothing answers. */
export function rawCommand(port: number, command: string, timeoutMs = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    const done = (reply: string | undefined) => { socket.destroy(); resolve(reply); };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.on('error', () => done(undefined));
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) done(data);
    });
  });
}

/**
 * Runs redis-cli and resolves with its exit code and output. For replies in
 * bulk (CLUSTER INFO, ROLE, SENTINEL MASTER), which rawCommand does not read.
 */
export function redisCli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('close', (code) => resolve({ code, out }));
  });
}

/**
 * Servers not closed yet. Whatever is left when the test process ends (a
 * hook that failed or ran out of time before its close) is killed on the
 * way out, so no redis-server outlives the tests.
 */
const left = new Map<string, () => ChildProcess | undefined>();
process.on('exit', () => {
  for (const [dir, child] of left) {
    child()?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

export interface OwnedRedis {
  port: number;
  url: string;
  dir: string;
  /** Kills the process (SIGKILL by default: as a crash) and waits for it to end. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and directory (its append-only file brings the data back); nothing while it runs. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a redis-server the test owns. `args` are extra command-line
 * settings; `config` is the text of a configuration file written in its
 * directory and given first (a sentinel needs one it can rewrite).
 */
export async function startRedisServer(args: string[] = [], opts: { port?: number; config?: string } = {}): Promise<OwnedRedis> {
  const port = opts.port ?? await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'osn-redis-'));
  const config = opts.config === undefined ? [] : [join(dir, 'redis.conf')];
  if (opts.config !== undefined) writeFileSync(config[0]!, opts.config);
  let child: ChildProcess | undefined;
  left.set(dir, () => child);

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    // Once more while it runs would lose hold of it: the new one cannot bind the port and exits, the running one is never killed.
    if (running()) return;
    child = spawn('redis-server', [...config, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...args], { stdio: 'ignore' });
    child.on('error', () => {});
    for (let i = 0; i < 100; i += 1) {
      const reply = await rawCommand(port, 'PING', 200);
      if (reply?.startsWith('+PONG')) return;
      await sleep(50);
    }
    throw new Error(`redis-server on port ${port} did not answer`);
  }

  async function kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!running()) return;
    const current = child!;
    const exited = new Promise((r) => current.once('exit', r));
    current.kill(signal);
    await exited;
  }

  const close = async () => {
    await kill();
    rmSync(dir, { recursive: true, force: true });
    left.delete(dir);
  };
  try {
    await start();
  } catch (err) {
    await close();
    throw err;
  }
  return { port, dir, url: `redis://127.0.0.1:${port}`, kill, start, close };
}
