/**
 * A real Redis Cluster the tests own: 6 redis-server processes on free
 * loopback ports (3 masters, 3 replicas), made one by `redis-cli --cluster
 * create`, torn down (processes killed, directories removed) afterwards.
 */
import { rawCommand, redisCli, startRedisServer, type OwnedRedis } from './redis-server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface OwnedCluster {
  nodes: OwnedRedis[];
  /** `127.0.0.1:port,...` (REDIS_CLUSTER). */
  spec: string;
  /** The ports of the nodes that are masters now. */
  masters(): Promise<number[]>;
  /** Resolves once every live node says cluster_state:ok, there are 3 masters, and every live replica is in sync. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function info(port: number, section: string): Promise<string> {
  return (await redisCli(['-p', String(port), ...section.split(' ')])).out;
}

/**
 * Starts the Cluster. `nodeTimeoutMs` is `cluster-node-timeout`: how long a
 * master may be silent before its replica takes over.
 */
export async function startCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<OwnedCluster> {
  const nodes: OwnedRedis[] = [];
  const close = async () => { await Promise.all(nodes.map((n) => n.close())); };
  try {
    for (let i = 0; i < 6; i += 1) {
      nodes.push(await startRedisServer([
        '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 2000),
        '--appendonly', 'no',
        // A replica's first sync at once (Redis 7 waits 5 s for more replicas by default).
        '--repl-diskless-sync-delay', '0',
      ]));
    }
    const created = await redisCli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.out}`);
  } catch (err) {
    await close();
    throw err;
  }

  const cluster: OwnedCluster = {
    nodes,
    spec: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    async masters() {
      const out: number[] = [];
      for (const node of nodes) {
        if (!(await rawCommand(node.port, 'PING', 300))?.startsWith('+PONG')) continue;
        if ((await info(node.port, 'ROLE')).startsWith('master')) out.push(node.port);
      }
      return out;
    },
    async waitHealthy(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const live = [];
        for (const node of nodes) if ((await rawCommand(node.port, 'PING', 300))?.startsWith('+PONG')) live.push(node);
        const states = await Promise.all(live.map((n) => info(n.port, 'CLUSTER INFO')));
        const replication = await Promise.all(live.map((n) => info(n.port, 'INFO replication')));
        const synced = replication.every((r) => r.includes('role:master') || r.includes('master_link_status:up'));
        if (synced && states.every((s) => s.includes('cluster_state:ok')) && (await cluster.masters()).length === 3) return;
        if (Date.now() > deadline) throw new Error(`the Cluster did not become healthy:\n${states.join('\n')}`);
        await sleep(200);
      }
    },
    close,
  };
  await cluster.waitHealthy();
  return cluster;
}
