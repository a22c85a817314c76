/** The adoption's atomic steps: `lua/<name>.lua` beside this module, each with its in-process twin for the embedded store. */
import { lazyScript } from '../store/scripts.ts';

export const adoptClaim = lazyScript('adopt_claim', (kv, [record, moved, tombstone], [payload, lifetime, consumedAt, writtenAt, now]) => {
  const movedAt = kv.hget(moved!, 'at');
  if (movedAt !== null) return [0, Number(now) - Number(movedAt)];
  const refused = tombstone !== record && kv.exists(tombstone!);
  if (refused || kv.exists(record!)) {
    kv.hset(moved!, { at: now! });
    kv.pexpire(moved!, Number(lifetime));
    return [0, -1];
  }
  kv.hset(record!, { p: payload!, ...(consumedAt ? { c: consumedAt } : {}), ...(writtenAt ? { t: writtenAt } : {}) });
  kv.pexpire(record!, Number(lifetime));
  kv.hset(moved!, { at: now! });
  kv.pexpire(moved!, Number(lifetime));
  return [1];
}, import.meta.url);

export const adoptSite = lazyScript('adopt_site', (kv, [sites], [clientId, when, scopes]) => {
  const at = Number(when);
  const current = kv.hget(sites!, clientId!);
  if (current === null) {
    kv.hset(sites!, { [clientId!]: JSON.stringify({ firstSignInAt: at, lastSignInAt: at, scopes, status: 'connected' }) });
    return 1;
  }
  let site: Record<string, unknown>;
  try {
    site = JSON.parse(current) as Record<string, unknown>;
  } catch {
    return 0;
  }
  let changed = false;
  if (typeof site.firstSignInAt !== 'number' || at < site.firstSignInAt) {
    site.firstSignInAt = at;
    changed = true;
  }
  if (typeof site.lastSignInAt !== 'number' || at > site.lastSignInAt) {
    site.lastSignInAt = at;
    site.scopes = scopes;
    changed = true;
  }
  if (changed) kv.hset(sites!, { [clientId!]: JSON.stringify(site) });
  return 0;
}, import.meta.url);

export const adoptLease = lazyScript('adopt_lease', (kv, [lease], [holder, mode, ms]) => {
  const current = kv.get(lease!);
  if (mode === 'give') {
    if (current === holder) kv.del(lease!);
    return [1];
  }
  if (current !== null && current !== holder) return [0, kv.pttl(lease!)];
  kv.set(lease!, holder!, Number(ms));
  return [1];
}, import.meta.url);
