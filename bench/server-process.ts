/**
 * A server process of the benchmark: `node bench/server-process.ts A|B|C|D`, with
 * its settings as JSON in BENCH_SETTINGS. It serves HTTP on its port and
 * answers the orchestrator's calls (bench/rpc.ts) on the IPC channel.
 *
 * Why a process per server: autocannon is JavaScript too. In the server's
 * process it would share one event loop with the server under test, and every
 * response it parses would count as server latency; as separate processes the
 * OS puts them on the two cores.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

import { adapterKeys } from '../adapters/store-adapter.ts';
import { createMinter, inParallel, type Minter } from './mint.ts';
import { processCpuMicros, serve } from './rpc.ts';
import type { Counters, ServerApi } from './server-api.ts';
import { TTL, type CommonSettings } from './host.ts';
import { benchEmail, startA, startB, startC, startD, type ASettings, type CSettings, type DSettings, type ServerA, type ServerB } from './servers.ts';
import { summarizeProfile } from './profile.ts';

const kind = process.argv[2];
if (kind !== 'A' && kind !== 'B' && kind !== 'C' && kind !== 'D') throw new Error('usage: server-process.ts A|B|C|D');
const settings = JSON.parse(process.env.BENCH_SETTINGS ?? '{}') as ASettings & CSettings & DSettings & CommonSettings;

const starters = { A: startA, B: startB, C: startC, D: startD } as const;
const server: ServerA | ServerB = await starters[kind](settings);
let minter: Minter | undefined;
let profiler: Session | undefined;

function needA(): ServerA {
  if (server.kind !== 'A') throw new Error('only server A (the plugin) has this');
  return server;
}

function minterOf(): Minter {
  if (!minter) throw new Error('call accounts() first');
  return minter;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function counters(): Promise<Counters> {
  if (server.kind !== 'A') {
    const wire = server.wire ? { commands: server.wire.commands, roundTrips: server.wire.roundTrips, byName: Object.fromEntries(server.wire.byName), byScript: Object.fromEntries(server.wire.byScript) } : { commands: 0, roundTrips: 0, byName: {}, byScript: {} };
    return { store: { commands: 0, roundTrips: 0 }, wire, warnings: server.logger.warnings, errors: server.logger.errors, entries: server.storage?.size, cpuMicros: processCpuMicros() };
  }
  const { store } = server.plugin;
  return {
    store: { commands: store.commandsSent, roundTrips: store.roundTrips },
    wire: { commands: server.wire.commands, roundTrips: server.wire.roundTrips, byName: Object.fromEntries(server.wire.byName), byScript: Object.fromEntries(server.wire.byScript) },
    warnings: server.logger.warnings,
    errors: server.logger.errors,
    cpuMicros: processCpuMicros(),
  };
}

/** Wire commands and round trips of one piece of work (run alone). */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; commands: number; roundTrips: number }> {
  const a = needA();
  const before = { commands: a.wire.commands, roundTrips: a.wire.roundTrips };
  const start = process.hrtime.bigint();
  const value = await work();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { value, ms, commands: a.wire.commands - before.commands, roundTrips: a.wire.roundTrips - before.roundTrips };
}

type SignedIn = Awaited<ReturnType<Minter['signIn']>> & { accountId: string };
const memoryGrants: SignedIn[] = [];

async function signIn(accountId: string): Promise<SignedIn> {
  return { ...(await minterOf().signIn(accountId)), accountId };
}

const api: ServerApi = {
  async info() {
    const client = await server.provider.Client.find('bench-site');
    const expiresIn: Record<string, number> = {};
    for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode'] as const) {
      expiresIn[model] = new server.provider[model]({ client: client! } as never).expiration;
    }
    return { kind: server.kind, issuer: server.issuer, expiresIn };
  },

  async accounts({ count }) {
    const ids = Array.from({ length: count }, (_, i) => {
      const id = `account-${i}`;
      server.accounts.set(id, benchEmail(id)!);
      return id;
    });
    minter = await createMinter(server.provider, ids);
    return ids;
  },

  mint: ({ kind: tokenKind, count }) => minterOf().mint(tokenKind, count),

  counters,

  async wireCount() {
    const { wire } = server;
    if (!wire) throw new Error('B sends nothing to Redis');
    return [wire.commands, wire.roundTrips];
  },

  async setFloor(floor) {
    if (server.kind === 'A' || !server.setFloor) throw new Error('only server D (the floor) has this');
    server.setFloor(floor);
  },

  async connectPeople({ from, count }) {
    const a = needA();
    const ids = minterOf().accountIds.slice(from, from + count);
    if (ids.length < count) throw new Error(`only ${ids.length} accounts`);
    await inParallel(ids.length, 32, (i) => a.plugin.sites.recordSignIn({
      accountId: ids[i]!,
      clientId: 'bench-site',
      sub: ids[i]!, // public subject type: the site's sub is the account id
      scopes: ['openid', 'email'],
      sessionExpiresAt: Date.now() + TTL.Session * 1000,
    }));
    return ids;
  },

  async memoryPrepare({ kind: what, count }) {
    needA();
    const m = minterOf();
    if (what === 'grant') {
      // Every account already has a grant, so its grant index exists: what is measured is one more grant.
      await inParallel(m.accountIds.length, 32, (i) => m.signIn(m.accountIds[i]!));
      return;
    }
    // Tokens go ten to a grant (a grant holds a few tokens in real life).
    memoryGrants.length = 0;
    memoryGrants.push(...(await inParallel(Math.ceil(count / 10), 32, (i) => signIn(m.accountIds[i % m.accountIds.length]!))));
    // The grants' indexes exist before the measurement: one token each.
    await inParallel(memoryGrants.length, 32, (i) => tokenUnder(what, memoryGrants[i]!));
  },

  async memoryCreate({ kind: what, count }) {
    const a = needA();
    const m = minterOf();
    const keys: string[] = [];
    const prefix = a.plugin.store.prefix;
    await inParallel(count, 64, async (i) => {
      if (what === 'grant') {
        const grant = new a.provider.Grant({ accountId: m.accountIds[i % m.accountIds.length]!, clientId: 'bench-site' });
        grant.addOIDCScope('openid email');
        const id = await grant.save();
        if (i < 50) keys.push(`${prefix}Grant:{${id}}`);
        return;
      }
      const value = await tokenUnder(what, memoryGrants[i % memoryGrants.length]!);
      if (i < 50) keys.push(adapterKeys(prefix).record(what === 'access' ? 'AccessToken' : 'RefreshToken', value));
    });
    return keys;
  },

  async revokeGrant({ k, samples }) {
    const a = needA();
    const m = minterOf();
    const runs: { ms: number; commands: number; roundTrips: number; left: number }[] = [];
    for (let s = 0; s < samples; s++) {
      const grant = await signIn(m.accountIds[s % m.accountIds.length]!);
      const tokens = await inParallel(k, 64, () => tokenUnder('access', grant));
      const run = await measured(() => a.plugin.adapter.revokeGrant(grant.grantId));
      const probe = tokens.slice(0, 100);
      const left = (await Promise.all(probe.map((t) => a.provider.AccessToken.find(t)))).filter(Boolean).length;
      runs.push({ ms: run.ms, commands: run.commands, roundTrips: run.roundTrips, left });
    }
    return {
      k,
      samples,
      ms: median(runs.map((r) => r.ms)),
      commands: median(runs.map((r) => r.commands)),
      roundTrips: median(runs.map((r) => r.roundTrips)),
      left: runs.reduce((n, r) => n + r.left, 0),
    };
  },

  async inboxPages({ inboxes, calls, size }) {
    const a = needA();
    const { inbox } = a.plugin;
    const runs = inboxes.map(() => ({ times: [] as number[], commands: 0, roundTrips: 0, items: 0 }));
    // The inboxes take turns, call by call, so drift of the machine hits them alike.
    for (let i = 0; i < calls + 20; i++) {
      for (const [n, { accountId }] of inboxes.entries()) {
        const run = await measured(() => inbox.page(accountId, undefined, size));
        if (i < 20) continue; // warm-up
        const into = runs[n]!;
        into.times.push(run.ms);
        into.commands += run.commands;
        into.roundTrips += run.roundTrips;
        into.items = run.value?.items.length ?? 0;
      }
    }
    return inboxes.map(({ messages }, n) => {
      const { times, commands, roundTrips, items } = runs[n]!;
      const sorted = [...times].sort((x, y) => x - y);
      return {
        messages,
        calls,
        ms: median(times),
        p99: sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]!,
        commands: commands / calls,
        roundTrips: roundTrips / calls,
        items,
      };
    });
  },


  async drainLetters() {
    const a = needA();
    // A connection of its own: the plugin gives A's client a command timeout,
    // and draining the tens of thousands of letters op 5 leaves takes longer.
    const connection = new Redis(settings.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('letters', { connection, prefix: `${a.plugin.options.keyPrefix}{letters}` });
    await queue.drain(true);
    await queue.close();
    await connection.quit();
  },

  pendingLetters: () => needA().plugin.letters.pending(),

  async startLetterWorker() {
    needA().plugin.startLetterWorker();
  },

  stopLetterWorker: () => needA().plugin.stopLetterWorker(),

  async profileStart() {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  },

  async profileStop({ file }) {
    if (!profiler) throw new Error('no profile running');
    const { profile } = await profiler.post('Profiler.stop');
    profiler.disconnect();
    profiler = undefined;
    await writeFile(file, JSON.stringify(profile));
    return summarizeProfile(profile);
  },

  async close() {
    setImmediate(async () => {
      await server.close();
      process.exit(0);
    });
  },
};

/** An access or refresh token under an existing sign-in, as mint.ts makes them (same payload fields). */
async function tokenUnder(what: 'access' | 'refresh', signedIn: SignedIn): Promise<string> {
  const client = await server.provider.Client.find('bench-site');
  const common = {
    accountId: signedIn.accountId, client: client!, grantId: signedIn.grantId, sessionUid: signedIn.sessionUid,
    expiresWithSession: true, scope: 'openid email', gty: 'authorization_code',
  };
  return what === 'access'
    ? new server.provider.AccessToken(common).save()
    : new server.provider.RefreshToken({ ...common, authTime: signedIn.loginTs, rotations: 0 }).save();
}

serve(api);
// The orchestrator went away (killed, crashed): do not outlive it.
process.on('disconnect', () => process.exit(1));
process.send!({ ready: true });
