import { lazyScript as script, type Script, type ScriptReply } from './scripts.ts';

type KV = Parameters<Script['memory']>[0];

// The store's atomic steps. Each pairs `lua/<name>.lua` with its in-process
// twin; see the Lua file's header for KEYS and ARGV.

export const upsert = script('upsert', (kv, [key], [payload, ttl, at]) => {
  kv.del(key!);
  kv.hset(key!, at === undefined ? { p: payload! } : { p: payload!, t: at });
  kv.pexpire(key!, Number(ttl));
  return 1;
});

export const consume = script('consume', (kv, [key, answerKey, unwrittenKey], [at, answer, keepMs, redo]) => {
  if (!kv.exists(key!)) return [-1];
  const again = answerKey !== undefined && redo === '1' && kv.exists(answerKey) && kv.del(unwrittenKey!) === 1;
  if (kv.hsetnx(key!, 'c', at!) || again) {
    if (answerKey !== undefined) kv.set(answerKey, answer!, Number(keepMs));
    return [1];
  }
  if (answerKey === undefined) return [0, kv.hget(key!, 'p'), null, null];
  return [0, kv.hget(key!, 'p'), kv.get(answerKey), kv.exists(unwrittenKey!) ? 1 : null];
});

export const guardedUpsert = script('guarded_upsert', (kv, [key, tombstone], [payload, ttl, at]) => {
  if (kv.exists(tombstone!)) return 0;
  kv.del(key!);
  kv.hset(key!, at === undefined ? { p: payload! } : { p: payload!, t: at });
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


/** What the marks' hashes hold (lua/end_before.lua), as HMGET answers them. */
function siteMark(kv: KV, key: string): ScriptReply[] {
  return kv.hmget(key, ['grants']);
}
function personMark(kv: KV, key: string): ScriptReply[] {
  return kv.hmget(key, ['grants', 'sessions', 'keep']);
}

function parsed(p: string): Record<string, unknown> | undefined {
  try {
    const payload = JSON.parse(p) as unknown;
    return typeof payload === 'object' && payload !== null ? payload as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

export const tokenRead = script('token_read', (kv, [record], [sessionBefore, sessionAfter, grantBefore, grantAfter, siteBefore, siteAfter, personBefore, personAfter]) => {
  const [p, c] = kv.hmget(record!, ['p', 'c']);
  if (p == null) return [];
  const answer = c == null ? null : kv.get(`${record!}:answer`);
  const unwritten = answer !== null && kv.exists(`${record!}:unwritten`) ? 1 : null;
  let session: (string | null)[] = [null, null];
  let grant: (string | null)[] = [null, null];
  let site: ScriptReply = null;
  let person: ScriptReply = null;
  if (sessionBefore || grantBefore) {
    const payload = parsed(p);
    if (sessionBefore && payload?.expiresWithSession === true && typeof payload.sessionUid === 'string') {
      session = kv.hmget(`${sessionBefore}${payload.sessionUid}${sessionAfter}`, ['p', 't']);
    }
    if (grantBefore && typeof payload?.grantId === 'string') {
      grant = kv.hmget(`${grantBefore}${payload.grantId}${grantAfter}`, ['p', 't']);
    }
    if (siteBefore && (session[0] !== null || grant[0] !== null)) {
      if (typeof payload?.clientId === 'string') site = siteMark(kv, `${siteBefore}${payload.clientId}${siteAfter}`);
      if (typeof payload?.accountId === 'string') person = personMark(kv, `${personBefore}${payload.accountId}${personAfter}`);
    }
  }
  return [p, c ?? null, session[0]!, grant[0]!, answer, unwritten, site, person, session[1]!, grant[1]!];
});

export const recordRead = script('record_read', (kv, [record], [siteBefore, siteAfter, personBefore, personAfter]) => {
  const [p, c, t] = kv.hmget(record!, ['p', 'c', 't']);
  if (p == null) return [];
  const payload = parsed(p);
  const site = siteBefore && typeof payload?.clientId === 'string' ? siteMark(kv, `${siteBefore}${payload.clientId}${siteAfter}`) : null;
  const person = typeof payload?.accountId === 'string' ? personMark(kv, `${personBefore}${payload.accountId}${personAfter}`) : null;
  return [p, c ?? null, site, person, t ?? null];
});

export const endBefore = script('end_before', (kv, [mark], [field, at, keep]) => {
  let current = Number(kv.hget(mark!, field!) ?? '0');
  if (Number(at) > current) {
    kv.hset(mark!, { [field!]: at! });
    current = Number(at);
  }
  if (field === 'sessions') kv.hset(mark!, { keep: keep! });
  return current;
});

export const siteSignIn = script('site_signin', (kv, [sites, sids], [clientId, now, scopes, sid, sessionExpiresAt]) => {
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
function recordSiteUse(kv: KV, sites: string, clientId: string, at: number): 0 | 1 {
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

export const senderUpdate = script('sender_update', (kv, [senders], [clientId, muted, ...rest]) => {
  const current = kv.hget(senders!, clientId!);
  const s = (current ? JSON.parse(current) : {}) as { muted?: boolean; categories?: Record<string, string> };
  const categories = { ...(s.categories ?? {}) };
  let isMuted = s.muted === true;
  if (muted === '1') isMuted = true;
  else if (muted === '0') isMuted = false;
  const names = ['transactional', 'product', 'promotions'];
  names.forEach((name, i) => {
    const value = rest[i]!;
    const now = categories[name] ?? rest[3 + i]!;
    if (value === 'email_off') {
      if (now === 'account_and_email') categories[name] = 'account';
    } else if (value !== '') {
      categories[name] = value;
    }
  });
  const out = JSON.stringify({
    muted: isMuted,
    categories: Object.fromEntries(names.map((name, i) => [name, categories[name] ?? rest[3 + i]!])),
  });
  kv.hset(senders!, { [clientId!]: out });
  return out;
});

/** Twin of lua/includes/count_hit.lua: the hit's number, and the ms left in the window when over the limit. */
function countHit(kv: KV, key: string, limit: string, windowMs: string): [number, number | undefined] {
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

/** Twin of lua/includes/notify_site.lua. */
function notifySite(kv: KV, [subjects, rate, idempotency, ended]: string[], [sub, limit, windowMs, keyed, freshId, keyTtl]: string[]): ScriptReply[] {
  const held = keyed === '1' ? kv.get(idempotency!) : null;
  if (held !== null && !held.startsWith('#')) return ['replay', held];
  const [, left] = countHit(kv, rate!, limit!, windowMs!);
  if (left !== undefined) return ['rate', left];
  let id = freshId!;
  if (held !== null) id = held.slice(1);
  else if (keyed === '1') kv.set(idempotency!, `#${id}`, Number(keyTtl));
  return ['ok', kv.hget(subjects!, sub!) ?? '', id, kv.hget(ended!, 'grants') ?? '0'];
}

export const notifyClient = script('notify_client', (kv, keys, argv) => notifySite(kv, keys, argv));

export const notifyAnswer = script('notify_answer', (kv, [key], [answer]) => {
  const held = kv.get(key!);
  if (held === null || !held.startsWith('#')) return 0;
  const ttl = kv.pttl(key!);
  kv.set(key!, answer!, ttl > 0 ? ttl : undefined);
  return 1;
});

/** Twin of lua/includes/notify_person.lua. */
function notifyPerson(kv: KV, [sites, senders, rate, order, entries, unread, ended]: string[], [clientId, category, defaultDelivery, id, entry, now, limit, windowMs, keep, maxAge, siteEnded]: string[]): ScriptReply[] {
  const json = kv.hget(sites!, clientId!);
  const site = json === null ? undefined : JSON.parse(json) as { status?: string; lastSignInAt?: unknown };
  if (site?.status !== 'connected') return ['not_connected'];
  const endedAt = Math.max(Number(siteEnded) || 0, Number(kv.hget(ended!, 'grants') ?? '0') || 0);
  if (endedAt > 0 && (Number(site.lastSignInAt) || 0) <= endedAt) return ['not_connected'];
  const [, left] = countHit(kv, rate!, limit!, windowMs!);
  if (left !== undefined) return ['rate', left];
  let delivery = defaultDelivery!;
  const settings = kv.hget(senders!, clientId!);
  if (settings !== null) {
    const s = JSON.parse(settings) as { muted?: boolean; categories?: Record<string, string> };
    if (s.muted === true) return ['skip', 'muted'];
    delivery = s.categories?.[category!] ?? delivery;
  }
  if (delivery === 'off') return ['skip', 'category_off'];
  inboxAdd(kv, order!, entries!, unread!, id!, entry!, now!, keep!, maxAge!);
  return ['stored', delivery];
}

export const notifyAccount = script('notify_account', (kv, keys, argv) => notifyPerson(kv, keys, argv));

/** Single node: both steps in one script, the person's keys built from the account id found (lua/notify.lua). */
export const notify = script('notify', (kv, keys, argv) => {
  const site = notifySite(kv, keys, argv.slice(0, 6));
  if (site[0] !== 'ok' || site[1] === '') return site;
  const [account, id] = [site[1] as string, site[2] as string];
  const [before, ...after] = argv.slice(6, 13);
  const [clientId, category, defaultDelivery, entryTail, now, limit, windowMs, keep, maxAge, endedAfter] = argv.slice(13);
  const person = notifyPerson(kv, [...after, endedAfter!].map((a) => `${before}${account}${a}`), [clientId!, category!, defaultDelivery!, id, `{"id":"${id}",${entryTail}`, now!, limit!, windowMs!, keep!, maxAge!, site[3] as string]);
  // Lua drops a missing detail from the reply: so does the twin.
  return ['ok', account, id, ...person];
});

/** Twin of lua/includes/inbox_add.lua. */
function inboxAdd(kv: KV, order: string, entries: string, unread: string, id: string, entry: string, now: string, keep: string, maxAge: string): boolean {
  if (!kv.hsetnx(entries, id, entry)) return false;
  const newest = kv.zentries(order).at(-1)?.[1];
  const at = newest !== undefined && newest >= Number(now) ? newest + 1 : Number(now);
  kv.zadd(order, at, id);
  kv.zadd(unread, at, id);
  const all = kv.zentries(order);
  const cutoff = Number(now) - Number(maxAge);
  const old = all.filter(([, score]) => score < cutoff).map(([m]) => m);
  const excess = all.length - old.length - Number(keep);
  if (excess > 0) old.push(...all.slice(old.length, old.length + excess).map(([m]) => m));
  if (old.length > 0) {
    kv.zrem(order, ...old);
    kv.hdel(entries, ...old);
    kv.zrem(unread, ...old);
  }
  for (const key of [order, entries, unread]) kv.pexpire(key, Number(maxAge));
  return true;
}

export const theftNotice = script('theft_notice', (kv, [limit, order, entries, unread], [windowMs, id, entry, now, keep, maxAge]) => {
  if (kv.exists(limit!)) return 0;
  kv.set(limit!, id!, Number(windowMs));
  inboxAdd(kv, order!, entries!, unread!, id!, entry!, now!, keep!, maxAge!);
  return 1;
});

/** Redis' score formatting, so cursors compare equal in both stores. */
const scoreString = (score: number) => String(score);

export const inboxPage = script('inbox_page', (kv, [order, entries, unread], [maxScore, skipFrom, minScore, size]) => {
  const max = maxScore === '+inf' ? Infinity : Number(maxScore);
  const rows = kv.zentries(order!)
    .filter(([, score]) => score <= max && score >= Number(minScore))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
  const out: (string | number)[] = [kv.zcard(unread!), 0];
  let taken = 0;
  for (const [id, score] of rows) {
    if (skipFrom && scoreString(score) === maxScore && id >= skipFrom) continue;
    if (taken === Number(size)) {
      out[1] = 1;
      break;
    }
    taken += 1;
    out.push(id, scoreString(score), kv.hget(entries!, id) ?? '', kv.zscore(unread!, id) === null ? 0 : 1);
  }
  return out;
});

export const inboxChange = script('inbox_change', (kv, [order, entries, unread], [id, change]) => {
  if (kv.hget(entries!, id!) === null) return 0;
  kv.zrem(unread!, id!);
  if (change === 'delete') {
    kv.zrem(order!, id!);
    kv.hdel(entries!, id!);
  }
  return 1;
});

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

export const sessionSeen = script('session_seen', (kv, [sessions], [uid, now, userAgent, expiresAt, keep]) => {
  const at = Number(now);
  const current = kv.hget(sessions!, uid!);
  const entry = (current ? JSON.parse(current) : { firstSeenAt: at }) as Record<string, unknown>;
  entry.lastSeenAt = at;
  entry.expiresAt = Number(expiresAt);
  if (userAgent) entry.userAgent = userAgent;
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

/** A flat HGETALL-style reply `[field, value, ...]` as an object. */
export function pairsToObject(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[pairs[i]!] = pairs[i + 1]!;
  return out;
}

export const tokenBatch = script('token_batch', (kv, keys, argv) => {
  const [record, answerKey, index, tombstone, sites, unwrittenKey] = keys as [string, string, string, string, string, string];
  const [at, keep, answer, keepMs, redo, nowMs, prune, usedBy, usedAt] = argv as [string, string, string, string, string, string, string, string, string];
  if (usedBy !== '') recordSiteUse(kv, sites, usedBy, Number(usedAt));
  if (at !== '') {
    if (!kv.exists(record)) return [-1];
    const again = keep === '1' && redo === '1' && kv.exists(answerKey) && kv.del(unwrittenKey) === 1;
    if (!kv.hsetnx(record, 'c', at) && !again) {
      if (keep !== '1') return [0, kv.hget(record, 'p'), null, null];
      return [0, kv.hget(record, 'p'), kv.get(answerKey), kv.exists(unwrittenKey) ? 1 : null];
    }
    if (keep === '1') kv.set(answerKey, answer, Number(keepMs));
  }
  if (kv.exists(tombstone)) return [1];
  const now = Number(nowMs);
  let latest = 0;
  for (let i = 6; i < keys.length; i += 1) {
    const payload = argv[9 + (i - 6) * 2]!;
    const ttl = Number(argv[10 + (i - 6) * 2]);
    kv.del(keys[i]!);
    kv.hset(keys[i]!, { p: payload });
    kv.pexpire(keys[i]!, ttl);
    kv.zadd(index, now + ttl, keys[i]!);
    latest = Math.max(latest, now + ttl);
  }
  if (prune === '1') kv.zremrangebyscore(index, -Infinity, now);
  // PEXPIREAT ... GT, else NX: the expiry only moves later; an index without one gets one.
  const left = kv.pttl(index);
  if (left === -1 || latest > Date.now() + left) kv.pexpireat(index, latest);
  return [1];
});
