import { defineScript, loadLua, type Script } from './scripts.ts';

/**
 * The store's atomic steps. Each pairs `lua/<name>.lua` with its in-process
 * twin; see the Lua file's header for KEYS and ARGV.
 */
function script(name: string, memory: Script['memory']): () => Script {
  let loaded: Script | undefined;
  // Loaded on first use so importing the package reads no files.
  return () => (loaded ??= defineScript(name, loadLua(name), memory));
}

export const upsert = script('upsert', (kv, [key], [payload, ttl]) => {
  kv.del(key!);
  kv.hset(key!, { p: payload! });
  kv.pexpire(key!, Number(ttl));
  return 1;
});

export const consume = script('consume', (kv, [key], [at]) => {
  if (!kv.exists(key!)) return [-1];
  if (kv.hsetnx(key!, 'c', at!)) return [1];
  return [0, kv.hget(key!, 'p')];
});

export const guardedUpsert = script('guarded_upsert', (kv, [key, tombstone], [payload, ttl]) => {
  if (kv.exists(tombstone!)) return 0;
  kv.del(key!);
  kv.hset(key!, { p: payload! });
  kv.pexpire(key!, Number(ttl));
  return 1;
});

export const indexAdd = script('index_add', (kv, [index, tombstone], [member, expiresAt, now]) => {
  if (tombstone !== undefined && kv.exists(tombstone)) return 0;
  kv.zadd(index!, Number(expiresAt), member!);
  kv.zremrangebyscore(index!, -Infinity, Number(now));
  const last = kv.zentries(index!).at(-1);
  if (last) kv.pexpireat(index!, last[1]);
  return 1;
});

export const indexTake = script('index_take', (kv, [index], [prefix]) => {
  const members = kv.zentries(index!).map(([m]) => m);
  if (prefix === '') {
    kv.del(index!);
    return members;
  }
  const taken = members.filter((m) => m.startsWith(prefix!));
  kv.zrem(index!, ...taken);
  return taken;
});

export const grantRevoke = script('grant_revoke', (kv, [record, index, tombstone], [minTtl]) => {
  let ttl = Math.max(Number(minTtl), kv.pttl(record!));
  const last = kv.zentries(index!).at(-1);
  if (last) ttl = Math.max(ttl, last[1] - Date.now());
  kv.set(tombstone!, '1', ttl);
  kv.del(record!);
  const members = kv.zentries(index!).map(([m]) => m);
  kv.del(index!);
  return members;
});


export const siteSignIn = script('site_signin', (kv, [sites, sids], [clientId, now, scopes, sid, sessionExpiresAt]) => {
  const at = Number(now);
  const current = kv.hget(sites!, clientId!);
  const site = current ? JSON.parse(current) as Record<string, unknown> : { firstSignInAt: at, status: 'connected' };
  site.lastSignInAt = at;
  site.scopes = scopes;
  kv.hset(sites!, { [clientId!]: JSON.stringify(site) });
  if (sid) {
    kv.zadd(sids!, Number(sessionExpiresAt), sid);
    kv.zremrangebyscore(sids!, -Infinity, at);
    const last = kv.zentries(sids!).at(-1);
    if (last) kv.pexpireat(sids!, last[1]);
  }
  return site.status as string;
});

export const siteStatus = script('site_status', (kv, [sites], [clientId, status, now]) => {
  const current = kv.hget(sites!, clientId!);
  if (current === null) return null;
  const site = JSON.parse(current) as Record<string, unknown>;
  const previous = site.status as string;
  if (status === 'blocked') {
    if (previous !== 'blocked') site.blockedAt = Number(now);
  } else {
    delete site.blockedAt;
  }
  site.status = status;
  kv.hset(sites!, { [clientId!]: JSON.stringify(site) });
  return previous;
});


export const rateLimit = script('rate_limit', (kv, [key], [limit, windowMs]) => {
  const n = kv.incrby(key!, 1);
  if (n === 1) kv.pexpire(key!, Number(windowMs));
  if (n > Number(limit)) {
    let left = kv.pttl(key!);
    if (left < 0) {
      kv.pexpire(key!, Number(windowMs));
      left = Number(windowMs);
    }
    return [0, left];
  }
  return [1, Number(limit) - n];
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

function pairsToObject(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[pairs[i]!] = pairs[i + 1]!;
  return out;
}
