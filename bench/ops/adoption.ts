/**
 * The adoption window (issue 33, docs/performance.md "Taking over from a
 * previous adapter"): on a plugin that reads through to oidc-provider's
 * example Redis store, introspection of tokens moved in from it against
 * tokens it issued itself (the same round trips: the moved one is a native
 * record once moved), and of unknown tokens with the window open (one lookup
 * in the previous store for each model asked) and closed (none). Its own
 * process (bench/adoption-process.ts), run after the other servers stopped.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import type { AdoptionApi, AdoptionSettings } from '../adoption-process.ts';
import type { Bench } from '../context.ts';
import { BASIC_AUTH } from '../host.ts';
import { freePort } from '../free-port.ts';
import { deleteMatching } from '../redis.ts';
import { spawnRemote } from '../rpc.ts';
import { drive } from './drive.ts';
import type { AdoptionResult, AdoptionRow } from '../results.ts';
import { percentiles } from './run-result.ts';

const headers = { authorization: BASIC_AUTH, 'content-type': 'application/x-www-form-urlencoded' };
const body = (token: string) => `token=${token}&token_type_hint=access_token`;
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function adoptionOp(bench: Bench): Promise<AdoptionResult> {
  const { opts } = bench;
  bench.log('adoption: moved vs native tokens, unknown tokens with the window open and closed');
  const port = await freePort();
  const settings: AdoptionSettings = { ...bench.common, port, redisUrl: opts.redisUrl, keyPrefix: `${bench.prefix}adopt:`, previousPrefix: `${bench.prefix}adopt-previous:oidc:` };
  const remote = spawnRemote<AdoptionApi>(fileURLToPath(new URL('../adoption-process.ts', import.meta.url)), [], { BENCH_SETTINGS: JSON.stringify(settings) });
  await remote.ready;
  const url = `http://127.0.0.1:${port}/token/introspection`;
  const post = async (token: string) => {
    const start = process.hrtime.bigint();
    const res = await fetch(url, { method: 'POST', headers, body: body(token) });
    return { text: await res.text(), ms: Number(process.hrtime.bigint() - start) / 1e6 };
  };
  try {
    const pool = opts.quick ? 200 : 1000;
    await remote.call('accounts', { count: 100 });
    const native = await remote.call('mint', { where: 'native', count: pool });
    const moved = await remote.call('mint', { where: 'old', count: pool });
    const unknown = Array.from({ length: pool }, () => randomBytes(32).toString('base64url'));
    // Each old token moves in at its first introspection; each "Last used" is written once (not counted below).
    for (const token of [...moved, ...native]) await post(token);

    const one = async (name: string, tokens: string[], active: boolean) => {
      const c0 = await remote.call('counters', undefined);
      const latencies: number[] = [];
      let failures = 0;
      const n = Math.min(opts.sequential, tokens.length);
      for (const token of tokens.slice(0, n)) {
        const r = await post(token);
        latencies.push(r.ms);
        if (r.text.includes('"active":true') !== active) failures += 1;
      }
      const c1 = await remote.call('counters', undefined);
      return { case: name, storeCommands: (c1.commands - c0.commands) / n, storeRoundTrips: (c1.roundTrips - c0.roundTrips) / n, previousLookups: (c1.lookups - c0.lookups) / n, latency: percentiles(latencies), failures };
    };
    const timed = async (tokens: string[], active: boolean) => {
      let i = 0;
      const expect = (text: string) => text.includes('"active":true') === active;
      return (await drive(`http://127.0.0.1:${port}`, { path: '/token/introspection', headers, body: () => body(tokens[i++ % tokens.length]!), expect }, { connections: opts.connections, duration: opts.duration })).rps;
    };

    const rows: AdoptionRow[] = [];
    const seq = { native: await one('native token', native, true), moved: await one('moved token', moved, true), open: await one('unknown token, window open', unknown, false) };
    const rps: { native: number[]; moved: number[]; open: number[]; closed: number[] } = { native: [], moved: [], open: [], closed: [] };
    for (let round = 0; round < opts.rounds; round += 1) {
      rps.native.push(await timed(native, true));
      rps.moved.push(await timed(moved, true));
    }
    rps.open.push(await timed(unknown, false));
    if (await remote.call('closeWindow', undefined)) throw new Error('the window did not close');
    const closed = await one('unknown token, window closed', unknown, false);
    rps.closed.push(await timed(unknown, false));
    rows.push({ ...seq.native, rps: median(rps.native) }, { ...seq.moved, rps: median(rps.moved) }, { ...seq.open, rps: median(rps.open) }, { ...closed, rps: median(rps.closed) });
    const ratio = median(rps.moved.map((m, i) => m / rps.native[i]!));
    bench.log(`  moved/native ${ratio.toFixed(3)}; unknown: ${rows[2]!.previousLookups} lookups open, ${rows[3]!.previousLookups} closed`);
    return { rows, ratio, rounds: opts.rounds };
  } finally {
    await remote.stop();
    await deleteMatching(bench.redis, `${bench.prefix}adopt*`);
  }
}
