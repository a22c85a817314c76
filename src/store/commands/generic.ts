/** Small steps any caller (and a host, through oidc-signout-notify/store) uses: letters' marks, rate limits, hashes with a TTL. */
import { lazyScript as script } from '../scripts.ts';
import type { MemoryKV as KV } from '../memory-kv.ts';

export const letterClaim = script('letter_claim', (kv, [sent, hold], [holdMs, holder]) => {
  if (kv.exists(sent!)) return 'sent';
  if (kv.exists(hold!)) return 'held';
  kv.set(hold!, holder!, Number(holdMs));
  return 'claimed';
});

export const letterDone = script('letter_done', (kv, [sent, hold], [wasSent, keepMs]) => {
  if (wasSent === '1') kv.set(sent!, '1', Number(keepMs));
  kv.del(hold!);
  return 1;
});

export const rateLimit = script('rate_limit', (kv, [key], [limit, windowMs]) => {
  const [n, left] = countHit(kv, key!, limit!, windowMs!);
  return left === undefined ? [1, Number(limit) - n] : [0, left];
});

export const attempt = script('attempt', (kv, [key], [max]) => {
  if (!kv.exists(key!)) return [-1];
  const n = kv.hincrby(key!, 'attempts', 1);
  if (n > Number(max)) {
    kv.del(key!);
    return [-2];
  }
  return [n, ...Object.entries(kv.hgetall(key!)).flat()];
});

export const putTtl = script('put_ttl', (kv, [key], [ttl, ...pairs]) => {
  kv.del(key!);
  kv.hset(key!, pairsToObject(pairs));
  kv.pexpire(key!, Number(ttl));
  return 1;
});

export const claim = script('claim', (kv, [key], [value]) => {
  const current = kv.get(key!);
  if (current !== null) return current;
  kv.set(key!, value!);
  return value!;
});

export const del = script('del', (kv, [key]) => kv.del(key!));

export const hset = script('hset', (kv, [key], pairs) => {
  const before = Object.keys(kv.hgetall(key!)).length;
  kv.hset(key!, pairsToObject(pairs));
  return Object.keys(kv.hgetall(key!)).length - before;
});

export const hsetnx = script('hsetnx', (kv, [key], [field, value]) => (kv.hsetnx(key!, field!, value!) ? 1 : 0));

export const hdel = script('hdel', (kv, [key], fields) => kv.hdel(key!, ...fields));

export const zrem = script('zrem', (kv, [key], members) => kv.zrem(key!, ...members));

/** A flat HGETALL-style reply `[field, value, ...]` as an object. */
export function pairsToObject(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[pairs[i]!] = pairs[i + 1]!;
  return out;
}

/** Twin of lua/includes/count_hit.lua: the hit's number, and the ms left in the window when over the limit. */
export function countHit(kv: KV, key: string, limit: string, windowMs: string): [number, number | undefined] {
  const n = kv.incrby(key, 1);
  if (n === 1) kv.pexpire(key, Number(windowMs));
  if (n <= Number(limit)) return [n, undefined];
  let left = kv.pttl(key);
  if (left < 0) {
    kv.pexpire(key, Number(windowMs));
    left = Number(windowMs);
  }
  return [n, left];
}
