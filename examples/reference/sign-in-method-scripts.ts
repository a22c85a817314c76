import { lazyScript, pairsToObject, type Script, type Store } from '../../src/store-kit.ts';

/**
 * The atomic steps of passkeys and linked accounts: `lua/<name>.lua` beside
 * this file (KEYS and ARGV in its header) with its in-process twin for the
 * embedded store, as in sign-in-scripts.ts.
 */
const script = (name: string, memory: Script['memory']) => lazyScript(name, memory, import.meta.url);

export const signInTake = script('sign_in_take', (kv, [record]) => {
  const fields = kv.hgetall(record!);
  const flat = Object.entries(fields).flat();
  if (flat.length > 0) kv.del(record!);
  return flat;
});

/** Reads and deletes a record in one step: its fields, or undefined when it was not there (a record used once). */
export async function takeRecord(store: Store, key: string): Promise<Record<string, string> | undefined> {
  const flat = (await store.run(signInTake(), [key], [])) as string[];
  return flat.length === 0 ? undefined : pairsToObject(flat);
}

export const recordUpdate = script('record_update', (kv, [hash], [field, ...pairs]) => {
  const raw = kv.hget(hash!, field!);
  if (raw === null) return 0;
  const record = JSON.parse(raw) as Record<string, unknown>;
  for (let i = 0; i < pairs.length; i += 2) record[pairs[i]!] = JSON.parse(pairs[i + 1]!);
  kv.hset(hash!, { [field!]: JSON.stringify(record) });
  return 1;
});

export const passkeyUse = script('passkey_use', (kv, [hash], [id, counter, now, backedUp]) => {
  const raw = kv.hget(hash!, id!);
  if (raw === null) return 'missing';
  const record = JSON.parse(raw) as Record<string, unknown>;
  const stored = Number(record.counter ?? 0);
  const given = Number(counter);
  if ((given > 0 || stored > 0) && given <= stored) return 'counter';
  Object.assign(record, { counter: given, lastUsedAt: Number(now), backedUp: backedUp === 'true' });
  kv.hset(hash!, { [id!]: JSON.stringify(record) });
  return 'ok';
});

export const signInMethodRemove = script('sign_in_method_remove', (kv, [account, passkeys, links], [kind, field]) => {
  const target = kind === 'passkey' ? passkeys! : links!;
  const record = kv.hget(target, field!);
  if (record === null) return ['missing'];
  const ways = (kv.hget(account!, 'email') === null ? 0 : 1)
    + Object.keys(kv.hgetall(passkeys!)).length + Object.keys(kv.hgetall(links!)).length;
  if (ways <= 1) return ['last'];
  kv.hdel(target, field!);
  return ['ok', record];
});

export const release = script('release', (kv, [key], [value]) => (kv.get(key!) === value ? kv.del(key!) : 0));
