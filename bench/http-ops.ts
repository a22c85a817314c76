/**
 * Operations 1-5 of `npm run bench` (the HTTP routes) and the refresh race:
 * each operation's sanity check, warm-up, timed rounds with the servers
 * taking turns, one-at-a-time requests that count Redis commands and round
 * trips, and CPU profiles where a target is missed.
 */
import { join, relative } from 'node:path';

import type { Bench, Server } from './context.ts';
import { drive } from './ops/drive.ts';
import { floorRoundTrips, HTTP_OPS, type HttpOp, type HttpOpName } from './ops/oauth.ts';
import { aTokenRead } from './ops/a-token-read.ts';
import { refreshRace } from './ops/race.ts';
import { percentiles, type Load } from './ops/run-result.ts';
import { commandStats, commandTimes, statsDelta } from './redis.ts';
import { int, ms, num } from './report.ts';
import { aggregate, type Measured, type OpResult, type Sequential, type ServerName } from './results.ts';
import type { Counters } from './server-api.ts';
import { stolenPct } from './machine.ts';
import { comparedWith, missedRateTarget } from './targets.ts';

async function post(server: Server, op: HttpOp, body: string): Promise<{ status: number; text: string; ms: number }> {
  const start = process.hrtime.bigint();
  const res = await fetch(server.url + op.path, { method: 'POST', headers: op.headers, body });
  const text = await res.text();
  return { status: res.status, text, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

const top = (m: Map<string, number> | Record<string, number>, n: number, per: number) =>
  [...(m instanceof Map ? m : Object.entries(m))].sort((a, b) => b[1] - a[1]).slice(0, 6)
    .map(([name, calls]) => `${name} ${num(calls / n, per)}`).join(', ');

/**
 * `values.length` requests one after the other: latency without queueing,
 * and on A (C, D) the Redis commands and round trips per request (the store's
 * own counters, everything on its connection, and INFO commandstats).
 */
export async function sequential(bench: Bench, server: Server, op: HttpOp, values: string[], bodyOf = op.body): Promise<Sequential> {
  const { redis } = bench;
  // Tokens presented again and again (a pool): the site's "last used" write,
  // once a minute per site and person, may have fallen due since they were
  // last used in the timed runs. One pass first, not counted, so the counted
  // requests show the steady state (that write is in the timed runs' cost).
  if (op.needs !== 'person' && op.needs.use === 'pool') {
    for (const value of values) await post(server, op, bodyOf(value));
  }
  // A, C and D talk to Redis: their connections are counted (B has none).
  const talks = server.name !== 'B';
  const c0: Counters | undefined = talks ? await server.remote.call('counters', undefined) : undefined;
  const [s0, t0] = [await commandStats(redis), await commandTimes(redis)];
  const latencies: number[] = [];
  const trips: number[] = [];
  let failed = 0;
  for (const value of values) {
    const w0 = talks ? await server.remote.call('wireCount', undefined) : undefined;
    const r = await post(server, op, bodyOf(value));
    if (w0) trips.push((await server.remote.call('wireCount', undefined))[1] - w0[1]);
    latencies.push(r.ms);
    if (r.status >= 300 || !op.expect(r.text)) failed += 1;
  }
  trips.sort((a, b) => a - b);
  const [s1, t1] = [await commandStats(redis), await commandTimes(redis)];
  const n = values.length;
  const out: Sequential = { n, latency: percentiles(latencies), failures: failed };
  if (!c0) return out;
  const c1 = await server.remote.call('counters', undefined);
  const delta = statsDelta(s0, s1);
  delta.delete('info');
  const wireDelta: Record<string, number> = {};
  for (const [name, calls] of Object.entries(c1.wire.byName)) {
    const d = calls - (c0.wire.byName[name] ?? 0);
    if (d) wireDelta[name] = d;
  }
  return Object.assign(out, server.name !== 'A' ? {} : {
    storeCommands: (c1.store.commands - c0.store.commands) / n,
    storeRoundTrips: (c1.store.roundTrips - c0.store.roundTrips) / n,
  }, {
    wireCommands: (c1.wire.commands - c0.wire.commands) / n,
    wireRoundTrips: (c1.wire.roundTrips - c0.wire.roundTrips) / n,
    wireRoundTripsMedian: trips[Math.floor(trips.length / 2)],
    wireRoundTripsMax: trips.at(-1),
    wireByName: top(wireDelta, n, 2),
    serverCalls: [...delta.values()].reduce((a, b) => a + b, 0) / n,
    redisExecMicros: Object.keys(wireDelta).reduce((t, name) => t + (t1.get(name)?.usec ?? 0) - (t0.get(name)?.usec ?? 0), 0) / n,
    serverByName: top(delta, n, 2),
  });
}

/**
 * CPU profiles (V8's, as `node --cpu-prof` takes them) during one run each: of A
 * and of the server its missed target compares it with (D, else B); of every
 * server with --profile. They are written beside the results and stay on the
 * machine (git ignores them).
 */
export async function profile(bench: Bench, op: HttpOp, l: Load, expected: Record<string, number>, against: ServerName = 'B'): Promise<void> {
  const names = op.servers.filter((n) => bench.opts.profile || n === 'A' || n === against);
  for (const server of names.map((n) => bench.servers[n]).filter((s): s is Server => s !== undefined)) {
    const file = join(bench.opts.out, `${bench.stem}-${op.name}-${server.name}.cpuprofile`);
    const { body, supply } = await bench.bodies(server, op, bench.supplyCount(l, expected[server.name] ?? 1000));
    await server.remote.call('profileStart', undefined);
    const r = await drive(server.url, { path: op.path, headers: op.headers, body, expect: op.expect }, { ...l, supply });
    const summary = await server.remote.call('profileStop', { file });
    bench.collected.profiles.push({ op: op.title, server: server.name, file: relative(process.cwd(), file), rps: r.rps, requests: r.ok + r.non2xx + r.wrong, summary });
    bench.log(`  profile: ${file} (${int(r.rps)} req/s while profiling)`);
  }
}

async function sanity(bench: Bench, server: Server, op: HttpOp): Promise<void> {
  const values = await bench.sequentialValues(server, op, 20);
  const bad: string[] = [];
  for (const value of values) {
    const r = await post(server, op, op.body(value));
    if (r.status >= 300 || !op.expect(r.text)) bad.push(`${r.status} ${r.text.slice(0, 160)}`);
  }
  if (op.name === 'revoke') {
    // The revoked tokens must now be inactive.
    for (const value of values) {
      const r = await post(server, HTTP_OPS.introspect, HTTP_OPS.introspect.body(value));
      if (r.text !== '{"active":false}') bad.push(`revoked token still introspects ${r.text.slice(0, 80)}`);
    }
  }
  if (bad.length) throw new Error(`sanity check of ${op.title} on ${server.name} failed (${bad.length}/20): ${bad[0]}`);
}

/** Tells D the route of the operation about to run and A's round trips on it (none for the others). */
async function setFloor(bench: Bench, op: HttpOp): Promise<void> {
  const { D, A } = bench.servers;
  const roundTrips = floorRoundTrips(op.name);
  if (!D || roundTrips === undefined) {
    await D?.remote.call('setFloor', undefined);
    return;
  }
  const command = op.name === 'introspect' && bench.opts.dReadsAsA ? { command: await aTokenRead(bench.redis, bench.prefix, (await bench.pool(A!, 'access'))[0]!) } : {};
  await D.remote.call('setFloor', { path: op.path, roundTrips, ...command });
}

export async function httpOp(bench: Bench, name: HttpOpName): Promise<OpResult> {
  const { opts } = bench;
  const op = HTTP_OPS[name];
  const servers = op.servers.map((s) => bench.servers[s]).filter((s): s is Server => s !== undefined);
  bench.log(`${op.title}`);
  await setFloor(bench, op);
  for (const s of servers) await sanity(bench, s, op);

  const expected: Record<string, number> = {};
  for (const s of servers) {
    const w = await bench.load(s, op, { connections: opts.connections, amount: Math.max(opts.warmup, opts.connections * 20) });
    expected[s.name] = w.rps;
    bench.log(`  warm-up ${s.name}: ${int(w.rps)} req/s`);
  }
  const runs: Record<string, Measured[]> = { A: [], B: [], C: [], D: [] };
  for (let round = 0, retries = 0; round < opts.rounds;) {
    // The servers take turns, each starting a round in turn (A B C D, B C D A, C D A B, ...).
    const order = servers.map((_s, i) => servers[(i + round) % servers.length]!);
    const pair: Measured[] = [];
    for (const s of order) {
      const r = await bench.load(s, op, { connections: opts.connections, duration: opts.duration }, expected[s.name]);
      pair.push(r);
      bench.log(`  round ${round + 1} ${s.name}: ${int(r.rps)} req/s, p99 ${ms(r.latency.p99)} ms, non-2xx ${r.non2xx}, errors ${r.errors}, wrong ${r.wrong}, ${num(stolenPct(r), 0)} % stolen`);
    }
    if (bench.stolenRound(pair, retries, `${op.title}, round ${round + 1}`)) {
      retries += 1;
      continue;
    }
    order.forEach((s, i) => runs[s.name]!.push(pair[i]!));
    round += 1;
  }
  const result: OpResult = { op, byServer: {}, sequential: {} };
  for (const s of servers) {
    result.byServer[s.name] = aggregate(runs[s.name]!);
    result.sequential[s.name] = await sequential(bench, s, op, await bench.sequentialValues(s, op, opts.sequential));
  }
  if (name === 'introspect') {
    // KNOWN-TRAPS item 8: without token_type_hint the token is looked up as every kind.
    const values = await bench.sequentialValues(bench.a, op, opts.sequential);
    bench.collected.extraSequential.push({ label: '1. Introspection without token_type_hint', seq: await sequential(bench, bench.a, op, values, (t) => `token=${t}`) });
  }
  bench.collected.results.push(result);
  if (opts.profile || missedRateTarget(result)) await profile(bench, op, { connections: opts.connections, duration: opts.duration }, expected, comparedWith(result));
  return result;
}

/** The refresh race on A, B and C: trials of 20 concurrent refreshes with one token each. */
export async function raceOp(bench: Bench): Promise<void> {
  bench.log(`Refresh race: ${bench.opts.raceTrials} trials of 20 concurrent refreshes with one token`);
  for (const server of [bench.servers.A, bench.servers.B, bench.servers.C].filter((x): x is Server => x !== undefined)) {
    const tokens = await server.remote.call('mint', { kind: 'refresh', count: bench.opts.raceTrials });
    const result = await refreshRace(server.url, tokens, 20);
    bench.collected.raceRows.push({ server: server.name, result });
    bench.log(`  ${server.name}: ${result.raceFree}/${result.trials} race-free (${result.oneWinnerChainDead} one winner and chain dead, ${result.oneAnswerAgain} one answer given again), ${result.severalLive} with several live families`);
  }
}
