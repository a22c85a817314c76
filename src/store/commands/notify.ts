/** POST /api/notify's steps, the inbox, the theft notice's entry. */
import { lazyScript as script, type ScriptReply } from '../scripts.ts';
import type { MemoryKV as KV } from '../memory-kv.ts';
import { countHit } from './generic.ts';

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

export const securityNotice = script('security_notice', (kv, [limit, order, entries, unread], [windowMs, id, entry, now, keep, maxAge]) => {
  if (kv.exists(limit!)) return 0;
  kv.set(limit!, id!, Number(windowMs));
  inboxAdd(kv, order!, entries!, unread!, id!, entry!, now!, keep!, maxAge!);
  return 1;
});

type NoticeEntry = { receivedAt: number; details?: Record<string, unknown> };

export const newBrowserNotice = script('new_browser_notice', (kv, [limit, browsers, order, entries, unread], [windowMs, id, entry, now, keep, maxAge, each, endsAt]) => {
  if (kv.exists(limit!)) return ['held_back'];
  kv.set(limit!, id!, Number(windowMs));
  const n = kv.hincrby(browsers!, 'n', 1);
  if (n === 1) {
    kv.hset(browsers!, { until: endsAt! });
    kv.pexpire(browsers!, Number(windowMs));
  }
  if (n <= Number(each)) {
    inboxAdd(kv, order!, entries!, unread!, id!, entry!, now!, keep!, maxAge!);
    return ['given'];
  }
  const until = kv.hget(browsers!, 'until')!;
  if (n === Number(each) + 1) {
    const first = JSON.parse(entry!) as NoticeEntry;
    first.details = { ...first.details, count: 1, until: Number(until) };
    inboxAdd(kv, order!, entries!, unread!, id!, JSON.stringify(first), now!, keep!, maxAge!);
    kv.hset(browsers!, { summary: id! });
    return ['summary', until];
  }
  const summary = kv.hget(browsers!, 'summary');
  const stored = summary === null ? null : kv.hget(entries!, summary);
  if (summary !== null && stored !== null) {
    const told = JSON.parse(stored) as NoticeEntry;
    const latest = JSON.parse(entry!) as NoticeEntry;
    told.details = { ...told.details, count: n - Number(each), browser: latest.details?.browser, last: latest.receivedAt };
    kv.hset(entries!, { [summary]: JSON.stringify(told) });
    const score = kv.zscore(order!, summary);
    if (score !== null) kv.zadd(unread!, score, summary);
  }
  return ['coalesced'];
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
