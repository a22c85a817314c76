/**
 * The PostgreSQL the previous-store tests use (docs/testing.md): the machine's
 * at 127.0.0.1:5432 (database `test`, trust auth; PGHOST, PGPORT, PGUSER,
 * PGDATABASE override) when it answers; else one these tests start from the
 * PostgreSQL binaries (Debian's /usr/lib/postgresql/<version>/bin) in a
 * temporary directory on a free port, stopped and removed afterwards; else an
 * error that says how to install it. Never skipped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import { freePort } from './net.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Postgres {
  pool: pg.Pool;
  /** Where it runs: the machine's, or one these tests started. */
  where: string;
  close(): Promise<void>;
}

async function answers(config: pg.PoolConfig): Promise<boolean> {
  const client = new pg.Client({ ...config, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The directory of initdb and postgres: Debian's newest, else the PATH's. */
function binaries(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? found.replace(/\/initdb$/, '') : undefined;
}

/** PostgreSQL refuses to run as root: as root the server runs as the `postgres` user the Debian package makes. */
function runAs(): { uid: number; gid: number; prefix: string[] } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('PostgreSQL cannot run as root and there is no postgres user to run it as (Debian: apt-get install -y postgresql makes one)');
  return { uid, gid: id('-g'), prefix: ['runuser', '-u', 'postgres', '--'] };
}

async function startOwn(bin: string): Promise<{ config: pg.PoolConfig; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'osn-postgres-'));
  const user = runAs();
  if (user) chownSync(dir, user.uid, user.gid);
  const run = (cmd: string, args: string[]) => [...(user?.prefix ?? []), join(bin, cmd), ...args];
  const [initCmd, ...initArgs] = run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync']);
  const init = spawnSync(initCmd!, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed:\n${init.stdout}${init.stderr}`);
  }
  const port = await freePort();
  const [cmd, ...args] = run('postgres', ['-D', join(dir, 'data'), '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
  const child: ChildProcess = spawn(cmd!, args, { stdio: 'ignore' });
  const config = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  const deadline = Date.now() + 20_000;
  while (!(await answers(config))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error('the PostgreSQL these tests started did not answer');
    }
    await sleep(100);
  }
  return {
    config,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startPostgres(): Promise<Postgres> {
  const machine: pg.PoolConfig = {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    database: process.env.PGDATABASE ?? 'test',
  };
  if (await answers(machine)) {
    const pool = new pg.Pool({ ...machine, max: 10 });
    return { pool, where: `${machine.host}:${machine.port}`, close: () => pool.end() };
  }
  const bin = binaries();
  if (!bin) {
    throw new Error(`These tests need PostgreSQL: none answers at ${machine.host}:${machine.port} (database ${machine.database}, user ${machine.user}, trust auth), and no PostgreSQL binaries were found to start one. Install it (Debian: apt-get install -y postgresql; the tests then start their own from /usr/lib/postgresql/<version>/bin), or point PGHOST/PGPORT/PGUSER/PGDATABASE at one.`);
  }
  const own = await startOwn(bin);
  const pool = new pg.Pool({ ...own.config, max: 10 });
  return {
    pool,
    where: `a PostgreSQL of its own (${bin}) on port ${own.config.port}`,
    async close() {
      await pool.end();
      await own.stop();
    },
  };
}
