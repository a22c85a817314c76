/** Shared Signals' atomic steps: a site's stream, its held and polled security events; `lua/<name>.lua` beside this module, each with its in-process twin. */
import { pairsToObject } from '../store/commands/generic.ts';
import { lazyScript } from '../store/scripts.ts';

export const ssfStreamPut = lazyScript('ssf_stream_put', (kv, [key], [mode, streamId, ...pairs]) => {
  if (mode === 'create') {
    if (kv.exists(key!)) return 0;
  } else {
    if (kv.hget(key!, 'stream_id') !== streamId) return 0;
    if (mode === 'replace') kv.del(key!);
  }
  kv.hset(key!, pairsToObject(pairs));
  return 1;
}, import.meta.url);

export const ssfBufferAdd = lazyScript('ssf_buffer_add', (kv, [key], [max, ttl, jti, value]) => {
  const all = kv.hgetall(key!);
  if (jti! in all) return 1;
  if (Object.keys(all).length >= Number(max)) return 0;
  kv.hset(key!, { [jti!]: value! });
  kv.pexpire(key!, Number(ttl));
  return 1;
}, import.meta.url);

export const ssfBufferTake = lazyScript('ssf_buffer_take', (kv, [key]) => {
  const all = Object.entries(kv.hgetall(key!)).flat();
  kv.del(key!);
  return all;
}, import.meta.url);
