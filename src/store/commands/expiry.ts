/** Service sessions that end by their lifetime: the person's expiring sessions and the index of people (docs/session-expiry.md). */
import { lazyScript as script } from '../scripts.ts';
import type { MemoryKV as KV } from '../memory-kv.ts';

/** One expiring session as lua/site_signin.lua records it. */
interface Entry { exp: number; sites: Record<string, string>; lease?: number }

/** includes/expiry_people.lua's step. */
export function lowerPersonDue(kv: KV, people: string, accountId: string, due: number, graceMs: number): void {
  const current = kv.zscore(people, accountId);
  if (current === null || due < current) kv.zadd(people, due, accountId);
  const last = kv.zentries(people).at(-1);
  if (last) kv.pexpireat(people, last[1] + graceMs);
}

/** lua/site_signin.lua's expiry step. */
export function recordExpiring(kv: KV, expiring: string, people: string | undefined, [clientId, now, sid, exp, uid, accountId, grace]: string[]): void {
  if (!sid || !uid) return;
  const at = Number(now);
  const until = Number(exp);
  const graceMs = Number(grace);
  const recorded = kv.hget(expiring, uid);
  const entry = (recorded ? JSON.parse(recorded) : { sites: {} }) as Entry;
  entry.sites[clientId!] = sid;
  entry.exp = until;
  delete entry.lease;
  kv.hset(expiring, { [uid]: JSON.stringify(entry) });
  if (kv.pttl(expiring) < until + graceMs - at) kv.pexpireat(expiring, until + graceMs);
  if (people) lowerPersonDue(kv, people, accountId!, until, graceMs);
}

export const expiryIndex = script('expiry_index', (kv, [people], [accountId, due, claimed, grace]) => {
  const graceMs = Number(grace);
  if (claimed && kv.zscore(people!, accountId!) === Number(claimed)) {
    if (due) kv.zadd(people!, Number(due), accountId!);
    else kv.zrem(people!, accountId!);
    const last = kv.zentries(people!).at(-1);
    if (last) kv.pexpireat(people!, last[1] + graceMs);
    return 1;
  }
  if (due) lowerPersonDue(kv, people!, accountId!, Number(due), graceMs);
  return 1;
});

export const expiryClaim = script('expiry_claim', (kv, [people], [now, lease, max]) => {
  const at = Number(now);
  const due = kv.zentries(people!).filter(([, score]) => score <= at).slice(0, Number(max)).map(([accountId]) => accountId);
  if (due.length === 0) return [];
  const leased = at + Number(lease);
  for (const accountId of due) kv.zadd(people!, leased, accountId);
  const last = kv.zentries(people!).at(-1)!;
  if (kv.pttl(people!) < last[1] - at) kv.pexpireat(people!, last[1] + Number(lease));
  return [String(leased), ...due];
});

export const expiryTake = script('expiry_take', (kv, [expiring], [now, lease]) => {
  const at = Number(now);
  const leased = at + Number(lease);
  const out: string[] = [''];
  let nextDue: number | undefined;
  for (const [uid, json] of Object.entries(kv.hgetall(expiring!))) {
    const entry = JSON.parse(json) as Entry;
    let due = entry.exp;
    if (entry.lease !== undefined && entry.lease > at) {
      due = entry.lease;
    } else if (entry.exp <= at) {
      entry.lease = leased;
      kv.hset(expiring!, { [uid]: JSON.stringify(entry) });
      out.push(uid, json);
      due = leased;
    }
    if (nextDue === undefined || due < nextDue) nextDue = due;
  }
  if (nextDue !== undefined) out[0] = String(nextDue);
  return out;
});

export const expirySettle = script('expiry_settle', (kv, [expiring], [uid, later, grace]) => {
  const current = kv.hget(expiring!, uid!);
  if (current !== null) {
    if (!later) {
      kv.hdel(expiring!, uid!);
    } else {
      const entry = JSON.parse(current) as Entry;
      entry.exp = Number(later);
      delete entry.lease;
      kv.hset(expiring!, { [uid!]: JSON.stringify(entry) });
    }
  }
  let nextDue: number | undefined;
  let latest: number | undefined;
  for (const json of Object.values(kv.hgetall(expiring!))) {
    const entry = JSON.parse(json) as Entry;
    const due = entry.lease !== undefined && entry.lease > entry.exp ? entry.lease : entry.exp;
    if (nextDue === undefined || due < nextDue) nextDue = due;
    if (latest === undefined || entry.exp > latest) latest = entry.exp;
  }
  if (nextDue === undefined) return '';
  kv.pexpireat(expiring!, latest! + Number(grace));
  return String(nextDue);
});

export const expiryForget = script('expiry_forget', (kv, [expiring], [uid, clientId, keep]) => {
  const uids = uid ? [uid] : Object.keys(kv.hgetall(expiring!));
  let n = 0;
  for (const one of uids) {
    const current = kv.hget(expiring!, one);
    if (current === null || (!uid && !clientId && one === keep)) continue;
    if (!clientId) {
      kv.hdel(expiring!, one);
      n += 1;
      continue;
    }
    const entry = JSON.parse(current) as Entry;
    if (entry.sites[clientId] === undefined) continue;
    delete entry.sites[clientId];
    n += 1;
    if (Object.keys(entry.sites).length === 0) kv.hdel(expiring!, one);
    else kv.hset(expiring!, { [one]: JSON.stringify(entry) });
  }
  return n;
});
