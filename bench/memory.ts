/**
 * Redis memory per record in `npm run bench`: tokens and grants written
 * through A's models, inbox messages through the route, each measured as
 * the change of Redis' used_memory over `--memory-count` records.
 */
import { PEOPLE, type Bench } from './context.ts';
import { drive, roundRobin } from './ops/drive.ts';
import { HTTP_OPS, NOTIFICATION } from './ops/oauth.ts';
import { usedMemory } from './redis.ts';

/** Inbox messages for people of their own (category product: in the account only, no letter). */
async function inboxMemory(bench: Bench, count: number): Promise<void> {
  const a = bench.a;
  // 100 small inboxes (Redis keeps sorted sets of up to 128 entries compact,
  // as listpacks) and 20 large ones (200 messages and more: skiplists).
  const small = await a.remote.call('connectPeople', { from: PEOPLE + 2, count: 100 });
  const large = await a.remote.call('connectPeople', { from: PEOPLE + 102, count: 20 });
  const product = (sub: string) => JSON.stringify({ sub, ...NOTIFICATION, category: 'product' });
  const post = async (subs: string[], n: number) => {
    const r = await drive(a.url, { path: '/api/notify', headers: HTTP_OPS.notify.headers, body: roundRobin(subs, product), expect: (b) => b.startsWith('{"inApp":true') }, { connections: bench.opts.connections, amount: n });
    if (r.ok !== n) throw new Error(`memory: only ${r.ok} of ${n} inbox messages stored`);
  };
  for (const [subs, before, size] of [[small, 1, 'small'], [large, 200, 'large']] as const) {
    const what = `${size} inboxes (${before} → ${before + count / subs.length} messages)`;
    await post([...subs], subs.length * before);
    const m0 = await usedMemory(bench.redis);
    await post([...subs], count);
    const m1 = await usedMemory(bench.redis);
    bench.collected.memoryRows.push({ what: `inbox message, ${subs.length} ${what}, title ${NOTIFICATION.title.length} + body ${NOTIFICATION.body.length} chars`, perRecord: (m1 - m0) / count, count });
  }
}

export async function memoryOp(bench: Bench): Promise<void> {
  const { redis, prefix } = bench;
  bench.log('Redis memory per record');
  const count = bench.opts.memoryCount;
  // A small key table: when a table of millions of slots doubles during a measurement, its new
  // slots land in that record kind's used_memory delta.
  await bench.dropTokens();
  for (const kind of ['access', 'refresh', 'grant'] as const) {
    await bench.a.remote.call('memoryPrepare', { kind, count });
    const before = await usedMemory(redis);
    const keys = await bench.a.remote.call('memoryCreate', { kind, count });
    const after = await usedMemory(redis);
    const usage = await Promise.all(keys.map((k) => redis.memory('USAGE', k, 'SAMPLES', '0') as Promise<number | null>));
    const sampled = usage.filter((u): u is number => typeof u === 'number');
    // How Redis stores the record, and the index it joined (a grant's records, an account's grants).
    const payload = JSON.parse((await redis.hget(keys[0]!, 'p')) ?? '{}') as { grantId?: string; accountId?: string };
    const index = kind === 'grant' ? `${prefix}account:{${payload.accountId}}:grants:bench-site` : `${prefix}Grant:{${payload.grantId}}:records`;
    const encoding = `${await redis.object('ENCODING', keys[0]!)} / ${await redis.object('ENCODING', index)}`;
    bench.collected.memoryRows.push({
      encoding,
      what: { access: 'access token', refresh: 'refresh token', grant: 'grant' }[kind],
      perRecord: (after - before) / count,
      memoryUsage: sampled.reduce((a, b) => a + b, 0) / sampled.length,
      count,
    });
  }
  await inboxMemory(bench, count);
}
