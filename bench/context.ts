/**
 * One run of `npm run bench`: its Redis, the processes it started (the
 * servers A, B, C and D, the SMTP sink that counts letters), the tokens and
 * people the operations present, the load runs with the CPU each party used,
 * and what the operations collect for the report. bench/run.ts makes one;
 * the operations (http-ops.ts, notify-ops.ts, memory.ts, growth.ts) work
 * through it.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';

import { freePort } from './free-port.ts';
import { hostKeys, type CommonSettings } from './host.ts';
import { cpuTicks, STEAL_LIMIT, stolenPct } from './machine.ts';
import type { TokenKind } from './mint.ts';
import { drive, once, roundRobin } from './ops/drive.ts';
import type { HttpOp } from './ops/oauth.ts';
import type { Load } from './ops/run-result.ts';
import { runKind, type BenchOptions } from './options.ts';
import { deleteMatching, redisCpu, serverInfo } from './redis.ts';
import { int, num } from './report.ts';
import { resultsStem } from './results-index.ts';
import { emptyCollected, type Collected, type Measured, type ServerName } from './results.ts';
import { spawnRemote, type Remote } from './rpc.ts';
import type { ServerApi } from './server-api.ts';
import type { ASettings, CSettings, DSettings } from './servers.ts';
import type { SinkApi } from './sink-process.ts';

export interface Server {
  name: ServerName;
  url: string;
  remote: Remote<ServerApi>;
}

/** People connected to the site for /api/notify; 122 more accounts get inboxes of their own (growth, memory). */
export const PEOPLE = 1000;
/** Tokens presented again and again (introspection, revocation's checks): minted once per server and kind. */
const POOL = 1000;

const serverEntry = fileURLToPath(new URL('./server-process.ts', import.meta.url));

export class Bench {
  readonly prefix = `osn-bench:${randomBytes(4).toString('hex')}:`;
  /** C's keys: a prefix of their own, removed when C stops. */
  readonly prefixC = `osn-bench-c:${randomBytes(4).toString('hex')}:`;
  readonly collected: Collected = emptyCollected();
  readonly startedAt = new Date();
  /** The results' name without `.md`, and its CPU profiles' start (bench/results-index.ts). */
  readonly stem: string;
  /** Timed rounds stolen by the hypervisor are run again, at most this many times per operation. */
  readonly maxRetries: number;
  readonly servers: Partial<Record<ServerName, Server>> = {};
  readonly #pools = new Map<string, string[]>();
  #people: string[] = [];
  #cleaned = false;

  readonly opts: BenchOptions;
  readonly redis: Redis;
  readonly redisInfo: { version: string; keys: number };
  readonly sink: Remote<SinkApi>;
  readonly sinkPort: number;
  readonly common: Omit<CommonSettings, 'port'>;

  private constructor(parts: Pick<Bench, 'opts' | 'redis' | 'redisInfo' | 'sink' | 'sinkPort' | 'common'>) {
    ({ opts: this.opts, redis: this.redis, redisInfo: this.redisInfo, sink: this.sink, sinkPort: this.sinkPort, common: this.common } = parts);
    this.maxRetries = parts.opts.quick ? 0 : 3;
    this.stem = resultsStem(this.startedAt, runKind(parts.opts));
  }

  /** Connects to Redis (exits with a hint when it does not answer) and starts the SMTP sink. */
  static async start(opts: BenchOptions): Promise<Bench> {
    const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 2 });
    const redisInfo = await serverInfo(redis).catch((err: Error) => {
      console.error(`Redis at ${opts.redisUrl} does not answer (${err.message}). Start Redis 7 or set REDIS_URL.`);
      process.exit(1);
    });
    const sink = spawnRemote<SinkApi>(fileURLToPath(new URL('./sink-process.ts', import.meta.url)), []);
    await sink.ready;
    return new Bench({ opts, redis, redisInfo, sink, sinkPort: await sink.call('port', undefined), common: await hostKeys() });
  }

  log(message: string): void {
    console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
  }

  /** Letters the SMTP sink has accepted so far. */
  received(): Promise<number> {
    return this.sink.call('received', undefined);
  }

  /** Each server's settings: A's and D's Redis clients alike (D's round trips cost what A's do). */
  #settingsOf(name: ServerName, port: number): ASettings | CSettings | DSettings | CommonSettings {
    const { common, opts } = this;
    switch (name) {
      case 'A': return { ...common, port, redisUrl: opts.redisUrl, keyPrefix: this.prefix, smtpPort: this.sinkPort, letterConcurrency: opts.letterConcurrency, autoPipelining: opts.autoPipelining };
      case 'C': return { ...common, port, redisUrl: opts.redisUrl, keyPrefix: this.prefixC };
      case 'D': return { ...common, port, redisUrl: opts.redisUrl, autoPipelining: opts.autoPipelining };
      case 'B': return { ...common, port };
    }
  }

  /** A server process of that kind (another A: the letter worker's process in 5b). */
  async spawn(name: ServerName): Promise<Server> {
    const port = await freePort();
    const remote = spawnRemote<ServerApi>(serverEntry, [name], { BENCH_SETTINGS: JSON.stringify(this.#settingsOf(name, port)) });
    await remote.ready;
    return { name, url: `http://127.0.0.1:${port}`, remote };
  }

  /** A, which every operation needs. */
  get a(): Server {
    return this.servers.A!;
  }

  /** Stops B, C and D (the rest runs on A alone) and removes C's keys. */
  async stopOthers(): Promise<void> {
    const { B, C, D } = this.servers;
    await Promise.all([B?.remote.stop(), C?.remote.stop(), D?.remote.stop()]);
    delete this.servers.B;
    delete this.servers.C;
    delete this.servers.D;
    const deletedC = await deleteMatching(this.redis, `${this.prefixC}*`);
    if (deletedC) this.log(`removed C's ${int(deletedC)} keys`);
  }

  async cleanUp(): Promise<void> {
    if (this.#cleaned) return;
    this.#cleaned = true;
    await Promise.all(Object.values(this.servers).map((s) => s.remote.stop()));
    const deleted = await deleteMatching(this.redis, `${this.prefix}*`);
    this.log(`removed ${int(deleted)} keys under ${this.prefix}`);
    const deletedC = await deleteMatching(this.redis, `${this.prefixC}*`);
    if (deletedC) this.log(`removed ${int(deletedC)} keys under ${this.prefixC}`);
    await this.sink.stop();
    await this.redis.quit();
  }

  // ---------------------------------------------------------------- tokens and people

  async pool(server: Server, kind: TokenKind): Promise<string[]> {
    const key = `${server.name}:${kind}`;
    let values = this.#pools.get(key);
    if (!values) {
      values = await server.remote.call('mint', { kind, count: POOL });
      this.#pools.set(key, values);
    }
    return values;
  }

  async connectedPeople(): Promise<string[]> {
    if (!this.#people.length) this.#people = await this.a.remote.call('connectPeople', { from: 0, count: PEOPLE });
    return this.#people;
  }

  /** Bodies for about `count` requests of `op` on `server`: fresh tokens minted now, or a pool. */
  async bodies(server: Server, op: HttpOp, count: number): Promise<{ body: () => string | undefined; supply?: number }> {
    if (op.needs === 'person') return { body: roundRobin(await this.connectedPeople(), op.body) };
    if (op.needs.use === 'pool') return { body: roundRobin(await this.pool(server, op.needs.kind), op.body) };
    return once(await server.remote.call('mint', { kind: op.needs.kind, count }), op.body);
  }

  /** Values for `n` one-at-a-time requests. */
  async sequentialValues(server: Server, op: HttpOp, n: number): Promise<string[]> {
    if (op.needs === 'person') {
      const subs = await this.connectedPeople();
      return Array.from({ length: n }, (_, i) => subs[i % subs.length]!);
    }
    if (op.needs.use === 'pool') {
      const p = await this.pool(server, op.needs.kind);
      return Array.from({ length: n }, (_, i) => p[(i * 37) % p.length]!);
    }
    return server.remote.call('mint', { kind: op.needs.kind, count: n });
  }

  /** Drops the tokens, sessions and grants the runs left (millions after refresh and code exchange). */
  async dropTokens(): Promise<void> {
    for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'Session', 'Grant']) await deleteMatching(this.redis, `${this.prefix}${model}:*`);
    this.#pools.clear();
  }

  // ---------------------------------------------------------------- load runs

  /** Fresh tokens for a run: its amount, or twice what the expected rate needs for the duration. */
  supplyCount(l: Load, expectedRps: number): number {
    return l.amount ?? Math.ceil(Math.max(expectedRps, 200) * (l.duration ?? this.opts.duration) * 2) + 4 * this.opts.connections;
  }

  /** One load run with the CPU the server, Redis and this process used, and the machine's ticks. */
  async measuredDrive(server: Server, op: HttpOp, body: () => string | undefined, l: Load): Promise<Measured> {
    const [s0, r0, c0, t0] = [await server.remote.call('counters', undefined), await redisCpu(this.redis), process.cpuUsage(), cpuTicks()];
    const result = await drive(server.url, { path: op.path, headers: op.headers, body, expect: op.expect }, l);
    const [s1, r1, c1, t1] = [await server.remote.call('counters', undefined), await redisCpu(this.redis), process.cpuUsage(c0), cpuTicks()];
    return {
      ...result,
      ticks: t0 && t1 ? t1.total - t0.total : 0,
      stolen: t0 && t1 ? t1.steal - t0.steal : 0,
      idle: t0 && t1 ? t1.idle - t0.idle : 0,
      requests: result.ok + result.non2xx + result.wrong,
      serverCpu: s1.cpuMicros - s0.cpuMicros,
      redisCpu: (r1 - r0) * 1e6,
      clientCpu: c1.user + c1.system,
    };
  }

  /** One load run. `expectedRps` (the warm-up's) sizes the fresh tokens minted for a timed run. */
  async load(server: Server, op: HttpOp, l: Load, expectedRps = 1000): Promise<Measured> {
    const count = this.supplyCount(l, expectedRps);
    const { body, supply } = await this.bodies(server, op, count);
    const result = await this.measuredDrive(server, op, body, { ...l, supply });
    if (result.ranOut) this.collected.notes.push(`${op.title} on ${server.name}: the ${int(count)} fresh tokens minted for a run ran out after ${num(result.seconds, 1)} of ${l.duration} s; its rate is over the time it ran.`);
    return result;
  }

  /** Whether a timed round should be run again: the hypervisor took too much of the CPU and retries are left. */
  stolenRound(runs: { ticks: number; stolen: number }[], retries: number, what: string): boolean {
    if (!runs.some((r) => stolenPct(r) > STEAL_LIMIT) || retries >= this.maxRetries) return false;
    this.collected.stealRetries.push(what);
    return true;
  }
}
