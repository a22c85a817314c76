/** Connected sites and the person's sessions list. */
import { lazyScript as script } from '../scripts.ts';
import type { MemoryKV as KV } from '../memory-kv.ts';
import { recordExpiring } from './expiry.ts';

export const siteSignIn = script('site_signin', (kv, [sites, sids, expiring, people], [clientId, now, scopes, sid, sessionExpiresAt, uid, accountId, grace]) => {
  const at = Number(now);
  const current = kv.hget(sites!, clientId!);
  const site = current ? JSON.parse(current) as Record<string, unknown> : { firstSignInAt: at, status: 'connected' };
  site.lastSignInAt = at;
  site.scopes = scopes;
  if (site.status === 'access_removed') {
    site.status = 'connected';
    delete site.accessRemovedAt;
  }
  kv.hset(sites!, { [clientId!]: JSON.stringify(site) });
  if (sid) {
    kv.zadd(sids!, Number(sessionExpiresAt), sid);
    kv.zremrangebyscore(sids!, -Infinity, at);
    const last = kv.zentries(sids!).at(-1);
    if (last) kv.pexpireat(sids!, last[1]);
  }
  recordExpiring(kv, expiring!, people, [clientId!, now!, sid ?? '', sessionExpiresAt!, uid ?? '', accountId ?? '', grace ?? '0']);
  return site.status as string;
});

export const siteStatus = script('site_status', (kv, [sites], [clientId, status, now, onlyFrom]) => {
  const current = kv.hget(sites!, clientId!);
  if (current === null) return null;
  const site = JSON.parse(current) as Record<string, unknown>;
  const previous = site.status as string;
  if (onlyFrom && previous !== onlyFrom) return previous;
  if (status === 'blocked') {
    if (previous !== 'blocked') site.blockedAt = Number(now);
    delete site.accessRemovedAt;
  } else if (status === 'access_removed') {
    if (previous !== 'access_removed') site.accessRemovedAt = Number(now);
    delete site.blockedAt;
  } else {
    delete site.blockedAt;
    delete site.accessRemovedAt;
  }
  site.status = status;
  kv.hset(sites!, { [clientId!]: JSON.stringify(site) });
  return previous;
});

/** includes/site_use.lua's step: a site entry it cannot read is left as it is. */
export function recordSiteUse(kv: KV, sites: string, clientId: string, at: number): 0 | 1 {
  const current = kv.hget(sites, clientId);
  if (current === null) return 0;
  let site: unknown;
  try {
    site = JSON.parse(current);
  } catch {
    return 0;
  }
  if (typeof site !== 'object' || site === null) return 0;
  const entry = site as Record<string, unknown>;
  if (typeof entry.lastUsedAt === 'number' && entry.lastUsedAt >= at) return 0;
  entry.lastUsedAt = at;
  kv.hset(sites, { [clientId]: JSON.stringify(entry) });
  return 1;
}

export const siteUsed = script('site_used', (kv, [sites], [clientId, when]) => recordSiteUse(kv, sites!, clientId!, Number(when)));

export const sessionSeen = script('session_seen', (kv, [sessions], [uid, now, userAgent, expiresAt, keep, way = '']) => {
  const at = Number(now);
  const current = kv.hget(sessions!, uid!);
  const entry = (current ? JSON.parse(current) : { firstSeenAt: at }) as Record<string, unknown>;
  entry.lastSeenAt = at;
  entry.expiresAt = Number(expiresAt);
  if (userAgent) entry.userAgent = userAgent;
  if (way === '-') delete entry.upstream;
  else if (way.startsWith('=')) entry.upstream = way.slice(1);
  kv.hset(sessions!, { [uid!]: JSON.stringify(entry) });
  const live: [string, number, number][] = [];
  for (const [id, json] of Object.entries(kv.hgetall(sessions!))) {
    const e = JSON.parse(json) as { lastSeenAt?: number; expiresAt?: unknown };
    if (typeof e.expiresAt !== 'number' || e.expiresAt <= at) kv.hdel(sessions!, id);
    else live.push([id, e.lastSeenAt ?? 0, e.expiresAt]);
  }
  live.sort((a, b) => b[1] - a[1]);
  let latest = 0;
  live.forEach(([id, , expires], i) => {
    if (i >= Number(keep)) kv.hdel(sessions!, id);
    else if (expires > latest) latest = expires;
  });
  if (latest > 0) kv.pexpireat(sessions!, latest);
  return 1;
});

export const browserSeen = script('browser_seen', (kv, [browsers], [browser, now, keepMs, most]) => {
  const at = Number(now);
  const any = kv.zcard(browsers!);
  const score = kv.zscore(browsers!, browser!);
  kv.zadd(browsers!, at, browser!);
  kv.zremrangebyscore(browsers!, -Infinity, at - Number(keepMs));
  const entries = kv.zentries(browsers!);
  const extra = entries.length - Number(most);
  if (extra > 0) kv.zrem(browsers!, ...entries.slice(0, extra).map(([member]) => member));
  kv.pexpire(browsers!, Number(keepMs));
  if (any === 0) return 'first';
  return score !== null && score > at - Number(keepMs) ? 'known' : 'new';
});
