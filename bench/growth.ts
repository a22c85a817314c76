/**
 * Growth in `npm run bench`: introspection, refresh and revocation on A with
 * about 1,000 live tokens, then with `--growth-tokens` (a million), then
 * with about 1,000 again; revoking grants of 1 to 10,000 tokens; an inbox
 * page of 10 and of 1,000 messages. Nothing the plugin does should walk the
 * tokens: the token path's Redis commands per request stay the same at
 * every level, and rate and latency within bounds (bench/targets.ts).
 */
import { adapterKeys } from '../adapters/store-adapter.ts';
import { siteUsed } from '../src/store/commands.ts';
import { PEOPLE, type Bench } from './context.ts';
import { STEAL_LIMIT, stolenPct } from './machine.ts';
import { drive, once, roundRobin } from './ops/drive.ts';
import { HTTP_OPS, NOTIFICATION, type HttpOp } from './ops/oauth.ts';
import type { Load } from './ops/run-result.ts';
import { commandTimes, deleteFiller, lookupMicros, writeFiller } from './redis.ts';
import { int, ms, num } from './report.ts';
import { aggregate, failures, type Measured } from './results.ts';

export const GROWTH_BATCH = 400;
/** Filler records at the small level: with the level's own tokens, about 1,000 to 2,000 live tokens. */
export const SMALL_FILLER = 1000;
export const INBOX_PAGE = 10;
export const growthReps = (quick: boolean) => (quick ? 2 : 8);

/** Token records under the prefix (one SCAN), the filler included (its key names are hashes like every token's). */
async function liveTokens(bench: Bench): Promise<number> {
  let n = 0;
  let cursor = '0';
  do {
    const [next, keys] = await bench.redis.scan(cursor, 'MATCH', `${bench.prefix}*`, 'COUNT', 5000);
    cursor = next;
    for (const k of keys) if (/:(AccessToken|RefreshToken|AuthorizationCode):\{/.test(k)) n += 1;
  } while (cursor !== '0');
  return n;
}

/**
 * What A sent to Redis during `work`: every command, the site's "last used"
 * writes of their own among them (site_used, sent as EVALSHA or, the first
 * time Redis meets the script, as EVAL), and Redis' execution time of the
 * commands A sent (a script's includes what it runs).
 */
async function counted<T>(bench: Bench, work: () => Promise<T>): Promise<{ value: T; commands: number; lastUsed: number; execMicros: number }> {
  const a = bench.a.remote;
  const sha = siteUsed().sha;
  const [w0, wire0, times0] = [await a.call('wireCount', undefined), (await a.call('counters', undefined)).wire, await commandTimes(bench.redis)];
  const value = await work();
  const [w1, wire1, times1] = [await a.call('wireCount', undefined), (await a.call('counters', undefined)).wire, await commandTimes(bench.redis)];
  let execMicros = 0;
  for (const name of Object.keys(wire1.byName)) if ((wire1.byName[name] ?? 0) > (wire0.byName[name] ?? 0)) execMicros += (times1.get(name)?.usec ?? 0) - (times0.get(name)?.usec ?? 0);
  return { value, commands: w1[0] - w0[0], lastUsed: (wire1.byScript[sha] ?? 0) - (wire0.byScript[sha] ?? 0), execMicros };
}

/**
 * (1), (2) and (4) on A at one level. Refresh and revocation run in batches of
 * 400 fresh tokens; after a refresh batch the tokens it consumed and created
 * are deleted, so the level's own tokens stay the same. `filler` is how many
 * access-token records the filler holds at this level.
 */
async function growthLevel(bench: Bench, level: string, filler: number, introspectPool: string[]): Promise<void> {
  const { opts, redis, prefix, collected } = bench;
  const A = bench.a;
  // Steady state, not the moments right after a bulk write or delete (Redis is still rehashing
  // its key table then): a pause, then unmeasured introspections.
  await new Promise((r) => setTimeout(r, 3000));
  await drive(A.url, { path: HTTP_OPS.introspect.path, headers: HTTP_OPS.introspect.headers, body: roundRobin(introspectPool, HTTP_OPS.introspect.body) }, { connections: opts.connections, amount: 2000 });
  collected.lookupRows.push({ level, records: filler, micros: await lookupMicros(redis, prefix, filler) });
  for (const op of [HTTP_OPS.introspect, HTTP_OPS.refresh, HTTP_OPS.revoke]) {
    const runs: Measured[] = [];
    const sum = { commands: 0, lastUsed: 0, execMicros: 0 };
    let live = 0;
    const reps = op.name === 'introspect' ? 1 : growthReps(opts.quick);
    for (let rep = 0, attempt = 0; rep < reps; attempt++) {
      const created: string[] = [];
      let values = introspectPool;
      let body: () => string | undefined = roundRobin(introspectPool, op.body);
      let l: Load = { connections: opts.connections, duration: Math.min(opts.duration, 5) };
      if (op.name !== 'introspect') {
        values = await A.remote.call('mint', { kind: op.name === 'refresh' ? 'refresh' : 'access', count: GROWTH_BATCH });
        body = once(values, op.body).body;
        l = { connections: opts.connections, amount: GROWTH_BATCH };
      }
      if (rep === 0) live = await liveTokens(bench);
      const spec: HttpOp = op.name !== 'refresh' ? op : {
        ...op,
        // Note the tokens each refresh hands out, to delete them after the batch.
        expect: (b: string) => {
          if (!op.expect(b)) return false;
          const t = JSON.parse(b) as { access_token: string; refresh_token: string };
          created.push(adapterKeys(prefix).record('AccessToken', t.access_token), adapterKeys(prefix).record('RefreshToken', t.refresh_token));
          return true;
        },
      };
      const { value: r, commands, lastUsed, execMicros } = await counted(bench, () => bench.measuredDrive(A, spec, body, l));
      if (op.name === 'refresh') {
        const keys = [...created, ...values.map((v) => adapterKeys(prefix).record('RefreshToken', v))];
        for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
      }
      if (stolenPct(r) > STEAL_LIMIT && attempt < Math.min(2, bench.maxRetries)) {
        collected.growthRetries += 1;
        continue;
      }
      runs.push(r);
      sum.commands += commands;
      sum.lastUsed += lastUsed;
      sum.execMicros += execMicros;
      rep += 1;
      attempt = -1;
    }
    const a = aggregate(runs);
    const made = runs.reduce((n, r) => n + r.requests, 0);
    // The token path's own commands: the "last used" writes, one per site and person a minute, are shown apart.
    const commands = (sum.commands - sum.lastUsed) / made;
    collected.growthRows.push({ level, live, op: op.name, title: op.title, requests: made, rps: a.rps, p50: a.latency.p50, p99: a.latency.p99, commands, lastUsed: sum.lastUsed / made, exec: sum.execMicros / made, failures: failures(a), cpu: a.cpu, steal: a.steal });
    bench.log(`  ${level} ${op.name}: ${int(a.rps)} req/s, p99 ${ms(a.latency.p99)} ms, ${num(commands)} commands/request on the token path and ${num(sum.lastUsed / made)} "last used" writes`);
  }
}

export async function growthOp(bench: Bench): Promise<void> {
  const { opts, redis, prefix, collected } = bench;
  const A = bench.a;
  bench.log('Growth');
  // Only the token path on A's connection: operation 6 may have left A's letter
  // worker running, whose queue cleanup would send commands of its own there.
  await A.remote.call('stopLetterWorker', undefined);
  // Start from a small store: drop the tokens, sessions and grants the runs above left.
  await bench.dropTokens();
  const introspectPool = await A.remote.call('mint', { kind: 'access', count: 200 });
  const sample = await redis.hget(adapterKeys(prefix).record('AccessToken', introspectPool[0]!), 'p');
  const payload = JSON.parse(sample!) as Record<string, unknown>;
  const fill = (count: number) => writeFiller(redis, prefix, count, payload, 2 * 60 * 60 * 1000, 10_000);

  await fill(SMALL_FILLER);
  await growthLevel(bench, 'small, before', SMALL_FILLER, introspectPool);
  bench.log(`  writing ${int(opts.growthTokens)} access tokens (pipelined)`);
  collected.fillSeconds = await fill(opts.growthTokens);
  bench.log(`  written in ${num(collected.fillSeconds, 1)} s`);
  try {
    await growthLevel(bench, 'large', opts.growthTokens, introspectPool);
  } finally {
    collected.unfillSeconds = await deleteFiller(redis, prefix, opts.growthTokens);
    bench.log(`  removed again in ${num(collected.unfillSeconds, 1)} s`);
  }
  await fill(SMALL_FILLER);
  await growthLevel(bench, 'small, after', SMALL_FILLER, introspectPool);
  await deleteFiller(redis, prefix, SMALL_FILLER);

  for (const [k, samples] of [[1, 21], [100, 11], [10_000, opts.quick ? 1 : 3]] as const) {
    collected.grantRows.push(await A.remote.call('revokeGrant', { k, samples }));
    bench.log(`  revokeGrant k=${k}: ${ms(collected.grantRows.at(-1)!.ms)} ms`);
  }

  // Two accounts of their own: an inbox of 10 and one of 1,000 messages (the default inbox size), through the route.
  const [few, many] = await A.remote.call('connectPeople', { from: PEOPLE, count: 2 }) as [string, string];
  const product = (sub: string) => JSON.stringify({ sub, ...NOTIFICATION, category: 'product' });
  for (const [sub, n] of [[few, 10], [many, 1000]] as const) {
    const r = await drive(A.url, { path: '/api/notify', headers: HTTP_OPS.notify.headers, body: () => product(sub) }, { connections: 10, amount: n });
    if (r.ok !== n) throw new Error(`inbox of ${n}: only ${r.ok} messages stored`);
  }
  // Pages of 10, so both pages are full and carry the same items.
  collected.inboxRows.push(...await A.remote.call('inboxPages', {
    inboxes: [{ accountId: few, messages: 10 }, { accountId: many, messages: 1000 }],
    calls: opts.quick ? 100 : 1000,
    size: INBOX_PAGE,
  }));
}
