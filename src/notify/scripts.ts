/** Back-channel logout's atomic step: its outcome record; `lua/<name>.lua` beside this module, with its in-process twin. */
import { lazyScript } from '../store/scripts.ts';

export const logoutOutcome = lazyScript('logout_outcome', (kv, [hash, index], [field, value, ttlMs, onlyNew, nowMs, capText]) => {
  const [ttl, now, cap] = [Number(ttlMs), Number(nowMs), Number(capText)];
  if (onlyNew === '1' && kv.hget(hash!, field!) !== null) return 0;
  const isNew = kv.hget(hash!, field!) === null;
  kv.hset(hash!, { [field!]: value! });
  if (isNew) {
    if (kv.zcard(index!) === 0) {
      for (const [f, v] of Object.entries(kv.hgetall(hash!))) {
        if (f === field) continue;
        let at: unknown;
        try {
          at = (JSON.parse(v) as { at?: unknown }).at;
        } catch { /* dropped below */ }
        if (typeof at !== 'number' || at < now - ttl) kv.hdel(hash!, f);
        else kv.zadd(index!, at, f);
      }
    }
    kv.zadd(index!, now, field!);
    for (const [old] of kv.zentries(index!).filter(([, at]) => at < now - ttl).slice(0, 2)) {
      kv.hdel(hash!, old);
      kv.zrem(index!, old);
    }
    for (const [old] of kv.zentries(index!).slice(0, Math.max(0, kv.zcard(index!) - cap))) {
      kv.hdel(hash!, old);
      kv.zrem(index!, old);
    }
  }
  kv.pexpire(hash!, ttl);
  kv.pexpire(index!, ttl);
  return 1;
}, import.meta.url);
