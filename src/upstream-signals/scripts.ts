/** The receiver's atomic steps: `lua/<name>.lua` beside this module, each with its in-process twin for the embedded store. */
import { lazyScript } from '../store/scripts.ts';

export const claimOnce = lazyScript('upstream_claim_once', (kv, [key], [ttl]) => {
  if (kv.exists(key!)) return 0;
  kv.set(key!, '1', Number(ttl));
  return 1;
}, import.meta.url);

export const actionRecord = lazyScript('upstream_action_record', (kv, [key], [at, entry, max, ttl]) => {
  kv.zadd(key!, Number(at), entry!);
  const all = kv.zentries(key!).sort((a, b) => a[1] - b[1]);
  const extra = all.length - Number(max);
  if (extra > 0) kv.zrem(key!, ...all.slice(0, extra).map(([member]) => member));
  kv.pexpire(key!, Number(ttl));
  return 1;
}, import.meta.url);
