/** The adapter's records: write, consume, read with what follows, revoke, end (the "ended before" marks). */
import { lazyScript as script, type ScriptReply } from '../scripts.ts';
import type { MemoryKV as KV } from '../memory-kv.ts';
import { recordSiteUse } from './sites.ts';

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

/** What the marks' hashes hold (lua/end_before.lua), as HMGET answers them; null where none is set (includes/ended_marks.lua). */
function markOf(kv: KV, key: string, fields: string[]): ScriptReply {
  const mark = kv.hmget(key, fields);
  return mark.some((v) => v !== null) ? mark : null;
}
function siteMark(kv: KV, key: string): ScriptReply {
  return markOf(kv, key, ['grants']);
}
function personMark(kv: KV, key: string): ScriptReply {
  return markOf(kv, key, ['grants', 'sessions', 'keep']);
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
  if (p == null) return null;
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
  // As the script writes it: the records' payloads as the JSON texts they are.
  const text = JSON.stringify;
  return `[${p},${text(c ?? null)},${session[0] ?? 'null'},${grant[0] ?? 'null'},${text(answer)},${unwritten === 1},${text(site)},${text(person)},${text(session[1] ?? null)},${text(grant[1] ?? null)}]`;
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
