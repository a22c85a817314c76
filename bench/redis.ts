/**
 * The orchestrator's own Redis connection: server-side counters (INFO),
 * memory, the 1,000,000-token filler for the growth runs, and clean-up
 * (SCAN + DEL under the run's prefix, never KEYS).
 */
import type { Redis } from 'ioredis';

import { adapterKeys } from '../adapters/store-adapter.ts';

/** Calls and execution time (µs, Redis' own clock, I/O excluded) per command since start-up; commands run inside scripts included. */
export async function commandTimes(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await redis.info('commandstats');
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

/** Calls per command since start-up. */
export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  return new Map([...(await commandTimes(redis))].map(([name, { calls }]) => [name, calls]));
}

export function statsDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, calls] of after) {
    const d = calls - (before.get(name) ?? 0);
    if (d > 0) out.set(name, d);
  }
  return out;
}

/** CPU seconds the Redis server used so far (user + system, server-wide). */
export async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  return Number(/^used_cpu_user:([\d.]+)/m.exec(info)![1]) + Number(/^used_cpu_sys:([\d.]+)/m.exec(info)![1]);
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)![1]);
}

export async function serverInfo(redis: Redis): Promise<{ version: string; keys: number }> {
  const info = await redis.info('server');
  return { version: /^redis_version:(\S+)/m.exec(info)![1]!, keys: await redis.dbsize() };
}

/** Deletes every key matching `pattern` (SCAN + DEL in batches); returns how many. */
export async function deleteMatching(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

export const FILLER_ID = 'fill-';

/**
 * Writes `count` access-token records the way the adapter stores them
 * (`<prefix>AccessToken:{<sha256 of the id>}` hash `{ p: payload JSON }`,
 * the payload without its jti, with PEXPIRE), pipelined in batches. `payload`
 * is a real token's stored payload. Returns the seconds it took.
 */
export async function writeFiller(redis: Redis, prefix: string, count: number, payload: Record<string, unknown>, ttlMs: number, batch = 5000): Promise<number> {
  const keys = adapterKeys(prefix);
  const start = process.hrtime.bigint();
  for (let from = 0; from < count; from += batch) {
    const pipeline = redis.pipeline();
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const id = `${FILLER_ID}${i.toString(36).padStart(8, '0')}`;
      const key = keys.record('AccessToken', id);
      pipeline.hset(key, 'p', JSON.stringify(payload));
      pipeline.pexpire(key, ttlMs);
    }
    await pipeline.exec();
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Removes the filler again (its keys are hashes of the ids, so they are computed, not matched); returns the seconds it took. */
export async function deleteFiller(redis: Redis, prefix: string, count: number, batch = 10_000): Promise<number> {
  const keys = adapterKeys(prefix);
  const start = process.hrtime.bigint();
  for (let from = 0; from < count; from += batch) {
    const pipeline = redis.pipeline();
    for (let i = from; i < Math.min(count, from + batch); i++) {
      pipeline.unlink(keys.record('AccessToken', `${FILLER_ID}${i.toString(36).padStart(8, '0')}`));
    }
    await pipeline.exec();
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * Redis' own time (INFO commandstats usec) for one HGET of a random filler
 * record among `count`: what a key lookup costs Redis at this number of keys,
 * without the plugin. Pipelined in batches of 1,000; nothing else should be
 * sending HGET meanwhile.
 */
export async function lookupMicros(redis: Redis, prefix: string, count: number, lookups = 40_000): Promise<number> {
  const keys = adapterKeys(prefix);
  const hget = async () => (await commandTimes(redis)).get('hget') ?? { calls: 0, usec: 0 };
  const before = await hget();
  for (let done = 0; done < lookups; done += 1000) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1000; i++) {
      const n = Math.floor(Math.random() * count);
      pipeline.hget(keys.record('AccessToken', `${FILLER_ID}${n.toString(36).padStart(8, '0')}`), 'p');
    }
    await pipeline.exec();
  }
  const after = await hget();
  return (after.usec - before.usec) / Math.max(1, after.calls - before.calls);
}
