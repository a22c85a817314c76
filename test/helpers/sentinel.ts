/**
 * A Redis Sentinel deployment the tests own: a master, its replica and three
 * sentinels (`redis-server <config> --sentinel`, each with a configuration
 * file in a temporary directory of its own, which it rewrites), on free
 * loopback ports; processes killed and directories removed afterwards.
 */
import { Redis } from 'ioredis';

import { redisCli, startRedisServer, type OwnedRedis } from './redis-server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sentinels' announcement of a failover, as each one made it. */
export interface Switch {
  /** Port of the new master. */
  port: number;
  /** When (Date.now()) the first and the last sentinel announced it. */
  first: number;
  last: number;
}

export interface OwnedSentinel {
  /** The master and the replica at the start. */
  master: OwnedRedis;
  replica: OwnedRedis;
  sentinels: OwnedRedis[];
  /** The master's name the sentinels know it by. */
  name: string;
  /** REDIS_URL for the reference provider: `redis+sentinel://127.0.0.1:port,.../<name>`. */
  url: string;
  /** Resolves once every sentinel sees the master up with its replica in sync and the two other sentinels. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Listens to every sentinel's `+switch-master` (resolves once listening);
   * `switched` resolves when all of them have announced the same new master,
   * and fails after `timeoutMs`.
   */
  watchSwitch(timeoutMs?: number): Promise<{ switched: Promise<Switch>; close(): void }>;
  close(): Promise<void>;
}

/** `SENTINEL MASTER` and the like answer field, value, field, value... one a line. */
function fields(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < lines.length; i += 2) out[lines[i]!] = lines[i + 1]!;
  return out;
}

/**
 * Starts the deployment. `downAfterMs` is `down-after-milliseconds`: how long
 * the master may be silent before the sentinels call it down and fail over.
 */
export async function startSentinel(opts: { name?: string; downAfterMs?: number } = {}): Promise<OwnedSentinel> {
  const name = opts.name ?? 'osn-master';
  const started: OwnedRedis[] = [];
  const close = async () => { await Promise.all(started.map((r) => r.close())); };
  const own = async (r: Promise<OwnedRedis>) => {
    started.push(await r);
    return started.at(-1)!;
  };
  let master: OwnedRedis;
  let replica: OwnedRedis;
  const sentinels: OwnedRedis[] = [];
  try {
    // A replica's first sync at once (Redis 7 waits 5 s for more replicas by default).
    master = await own(startRedisServer(['--appendonly', 'no', '--repl-diskless-sync-delay', '0']));
    replica = await own(startRedisServer(['--appendonly', 'no', '--replicaof', '127.0.0.1', String(master.port)]));
    const config = [
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
      `sentinel down-after-milliseconds ${name} ${opts.downAfterMs ?? 1000}`,
      // A failover that stalls is tried again after twice this.
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n');
    for (let i = 0; i < 3; i += 1) sentinels.push(await own(startRedisServer(['--sentinel'], { config })));
  } catch (err) {
    await close();
    throw err;
  }

  const deployment: OwnedSentinel = {
    master, replica, sentinels, name, close,
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`,
    async waitHealthy(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const replication = (await redisCli(['-p', String(replica.port), 'INFO', 'replication'])).out;
        const views = await Promise.all(sentinels.map(async (s) => {
          const cli = async (...args: string[]) => (await redisCli(['-p', String(s.port), 'SENTINEL', ...args])).out.split('\n').map((l) => l.trim());
          const seen = fields(await cli('MASTER', name));
          const replicas = await cli('REPLICAS', name);
          return seen.flags === 'master' && seen['num-other-sentinels'] === '2' && seen['num-slaves'] === '1'
            && replicas.includes(String(replica.port)) && fields(replicas)['master-link-status'] === 'ok' && fields(replicas).flags === 'slave';
        }));
        if (replication.includes('master_link_status:up') && views.every(Boolean)) return;
        if (Date.now() > deadline) throw new Error(`the Sentinel deployment did not become healthy:\n${replication}`);
        await sleep(200);
      }
    },
    async watchSwitch(timeoutMs = 30_000) {
      const at = new Map<number, { port: number; when: number }>();
      const clients = sentinels.map((s) => new Redis({ host: '127.0.0.1', port: s.port, retryStrategy: () => null, maxRetriesPerRequest: 1 }));
      let done: (s: Switch) => void;
      let timer: NodeJS.Timeout;
      const switched = new Promise<Switch>((resolve, reject) => {
        done = (s) => { clearTimeout(timer); resolve(s); };
        timer = setTimeout(() => reject(new Error(`the sentinels did not all announce a new master within ${timeoutMs} ms (${at.size} did)`)), timeoutMs);
      });
      await Promise.all(clients.map(async (client, i) => {
        client.on('error', () => {});
        client.on('message', (_channel: string, message: string) => {
          // "<name> <old ip> <old port> <new ip> <new port>"
          const [, , , , port] = message.split(' ');
          at.set(i, { port: Number(port), when: Date.now() });
          const all = [...at.values()];
          if (all.length === sentinels.length && all.every((a) => a.port === all[0]!.port)) {
            done({ port: all[0]!.port, first: Math.min(...all.map((a) => a.when)), last: Math.max(...all.map((a) => a.when)) });
          }
        });
        await client.subscribe('+switch-master');
      }));
      return { switched, close: () => { clearTimeout(timer); for (const c of clients) c.disconnect(); } };
    },
  };
  try {
    await deployment.waitHealthy();
  } catch (err) {
    await close();
    throw err;
  }
  return deployment;
}
