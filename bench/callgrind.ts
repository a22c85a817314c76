/**
 * Runs one of `npm run bench`'s servers (A, B or D) under valgrind's
 * callgrind and counts the instructions of a number of requests of one
 * operation, thread by thread: the runner `npm run bench:instructions`
 * (bench/instructions.ts) and `npm run bench:guard` (bench/guard.ts) share.
 *
 * Each server runs in a process of its own (bench/server-process.ts), is
 * warmed up with the same requests until V8 has optimized the hot code, then
 * its counters are zeroed (`callgrind_control -z`), the requests are made one
 * at a time on one keep-alive connection, and the counters are dumped. The
 * main thread runs the server; the others are V8's (garbage collection, the
 * optimizing compiler) and the thread pool.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';

import { namedSelfCosts } from './callgrind-names.ts';
import { freePort } from './free-port.ts';
import type { CommonSettings } from './host.ts';
import { aTokenRead } from './ops/a-token-read.ts';
import { floorRoundTrips, HTTP_OPS, type FloorOpName, type HttpOp } from './ops/oauth.ts';
import { int } from './report.ts';
import { spawnRemote } from './rpc.ts';
import type { TokenKind } from './mint.ts';
import type { ServerApi } from './server-api.ts';
import type { ASettings, DSettings, FloorRoute } from './servers.ts';

export type Name = 'A' | 'B' | 'D';

export interface Row {
  op: FloorOpName;
  server: Name;
  /** Instructions per request on the server's main thread. */
  main: number;
  /** On the other threads, together. */
  others: number;
  /** names: the main thread's own instructions per request, by function. */
  functions?: Map<string, number>;
}

export interface CallgrindSettings {
  redisUrl: string;
  /** A's key prefix (removed by the caller). */
  prefix: string;
  /** Where the dumps go (removed by the caller). */
  workDir: string;
  /** The run's signing and cookie keys (bench/host.ts). */
  common: Omit<CommonSettings, 'port'>;
  warmup: number;
  requests: number;
  /** Name V8's compiled code and report each function's own instructions. */
  names?: boolean;
  /** Introspection: D sends A's own token read instead of its PING. */
  dReadsAsA?: boolean;
  log: (message: string) => void;
}

/** Whether valgrind and callgrind_control are there. */
export function haveValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const serverEntry = fileURLToPath(new URL('./server-process.ts', import.meta.url));

/** A measure(server, operation) over the settings. */
export function callgrindRunner(settings: CallgrindSettings): (name: Name, opName: FloorOpName) => Promise<Row> {
  const { redisUrl, prefix, workDir, common, warmup, requests, log } = settings;
  const names = settings.names ?? false;

  function settingsOf(name: Name, port: number): ASettings | DSettings | CommonSettings {
    switch (name) {
      // No letters are sent in these operations: the SMTP port is never dialled.
      // The plugin's longest redisTimeoutMs: under valgrind, minting the tokens takes A longer than the default 1.5 s per command.
      case 'A': return { ...common, port, redisUrl, keyPrefix: prefix, smtpPort: 1, letterConcurrency: 1, autoPipelining: false, redisTimeoutMs: 30_000 };
      case 'D': return { ...common, port, redisUrl, autoPipelining: false };
      case 'B': return { ...common, port };
    }
  }

  /** One request (one after the other: fetch keeps its one connection alive) and a check of its answer. */
  async function post(port: number, op: HttpOp, body: string): Promise<void> {
    const res = await fetch(`http://127.0.0.1:${port}${op.path}`, { method: 'POST', headers: op.headers, body });
    const text = await res.text();
    if (!res.ok || !op.expect(text)) throw new Error(`${op.title}: ${res.status} ${text.slice(0, 200)}`);
  }

  /** The dump's file of each thread: the main thread first (callgrind numbers threads from 1). */
  const dumps = async (pid: number) => (await readdir(workDir)).filter((f) => f.startsWith(`cg.${pid}.out.`)).sort();

  /** Instructions of each thread's dump, the main thread first. */
  async function threadTotals(pid: number): Promise<number[]> {
    const totals: number[] = [];
    for (const file of await dumps(pid)) {
      const summary = /^summary: (\d+)/m.exec(await readFile(join(workDir, file), 'utf8'));
      totals.push(summary ? Number(summary[1]) : 0);
    }
    return totals;
  }

  const spawn = async (name: Name, wrapper?: string[]) => {
    const port = await freePort();
    const env = {
      BENCH_SETTINGS: JSON.stringify(settingsOf(name, port)),
      ...(wrapper && names ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --perf-basic-prof`.trim() } : {}),
    };
    // V8 writes its code log where the process runs: in the work folder, removed at the end.
    const remote = spawnRemote<ServerApi>(serverEntry, [name], env, { wrapper, cwd: workDir });
    await remote.ready;
    await remote.call('accounts', { count: 100 });
    return { port, remote };
  };

  /** dReadsAsA: A's token read on a record an A (outside valgrind) writes under the prefix. */
  async function aCommand(): Promise<FloorRoute['command']> {
    const { remote } = await spawn('A');
    const redis = new Redis(redisUrl);
    try {
      const [token] = await remote.call('mint', { kind: 'access', count: 1 });
      return await aTokenRead(redis, prefix, token!);
    } finally {
      await redis.quit();
      await remote.stop();
    }
  }

  return async function measure(name, opName) {
    const op = HTTP_OPS[opName];
    const command = name === 'D' && opName === 'introspect' && settings.dReadsAsA ? await aCommand() : undefined;
    const { port, remote } = await spawn(name, [
      'valgrind', '--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', // V8 writes the code it runs
      `--callgrind-out-file=${join(workDir, 'cg.%p.out')}`, '--quiet',
    ]);
    try {
      if (name === 'D') await remote.call('setFloor', { path: op.path, roundTrips: floorRoundTrips(opName)!, ...(command ? { command } : {}) });
      const needs = op.needs as { kind: TokenKind; use: 'once' | 'pool' };
      const tokens = await remote.call('mint', { kind: needs.kind, count: needs.use === 'once' ? warmup + requests : 200 });
      let next = 0;
      const body = () => op.body(tokens[needs.use === 'once' ? next++ : next++ % tokens.length]!);
      log(`${name} ${opName}: warming up (${int(warmup)} requests)`);
      for (let i = 0; i < warmup; i++) await post(port, op, body());
      execFileSync('callgrind_control', ['--zero', String(remote.pid)], { stdio: 'ignore' });
      for (let i = 0; i < requests; i++) await post(port, op, body());
      execFileSync('callgrind_control', ['--dump', String(remote.pid)], { stdio: 'ignore' });
      const [main = 0, ...others] = await threadTotals(remote.pid);
      const row: Row = { op: opName, server: name, main: main / requests, others: others.reduce((a, b) => a + b, 0) / requests };
      if (names) {
        const map = `/tmp/perf-${remote.pid}.map`;
        row.functions = await namedSelfCosts(join(workDir, (await dumps(remote.pid))[0]!), map, requests);
        await rm(map, { force: true });
      }
      log(`${name} ${opName}: ${int(row.main)} instructions per request on the main thread, ${int(row.others)} on the others`);
      return row;
    } finally {
      await remote.stop();
    }
  };
}
