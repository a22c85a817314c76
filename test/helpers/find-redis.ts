/**
 * The Redis the tests (and `npm run mutate`) use: REDIS_URL, else
 * 127.0.0.1:6379, else a throwaway redis-server on a free port, else an
 * error that says how to get one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

import { freePort } from './net.ts';

export function ping(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG') || data.toString().startsWith('-NOAUTH')));
  });
}

export async function findRedis(): Promise<{ url: string; child?: ChildProcess }> {
  if (process.env.REDIS_URL) {
    if (await ping(process.env.REDIS_URL)) return { url: process.env.REDIS_URL };
    throw new Error(`REDIS_URL=${process.env.REDIS_URL} does not answer PING`);
  }
  const local = 'redis://127.0.0.1:6379';
  if (await ping(local)) return { url: local };
  if (spawnSync('redis-server', ['--version']).status === 0) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const url = `redis://127.0.0.1:${port}`;
    for (let i = 0; i < 50; i += 1) {
      if (await ping(url)) return { url, child };
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill();
    throw new Error('started redis-server but it did not answer');
  }
  throw new Error('The tests need Redis 7: set REDIS_URL, run one on 127.0.0.1:6379, or install redis-server (Debian: apt-get install -y redis-server).');
}

