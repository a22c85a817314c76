import { createHash } from 'node:crypto';

import type { Store } from '../../src/store-kit.ts';
import { signInMethodRemove } from './sign-in-method-scripts.ts';

/**
 * Where an account's ways in live, all under the account's hash tag so one
 * script sees them together (docs/redis-keys.md "Redis keys", all persistent):
 * `<prefix>account:{<id>}` (its address), `...:passkeys` (credential id ->
 * JSON) and `...:upstreams` (upstream id -> JSON link).
 */
export function methodKeys(prefix: string, accountId: string) {
  const account = `${prefix}account:{${accountId}}`;
  return { account, passkeys: `${account}:passkeys`, upstreams: `${account}:upstreams` };
}

/** A bounded, non-identifying key part for an identifier chosen elsewhere (a credential id, an upstream's `sub`). */
export function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

export type RemoveResult = { removed: string } | { refused: 'missing' | 'last' };

/**
 * Removes a passkey or a linked account unless it is the account's last way
 * in (no address, nothing else): checked and removed in one step, so two
 * removals at once cannot leave the account with none.
 */
export async function removeMethod(store: Store, accountId: string, kind: 'passkey' | 'upstream', field: string): Promise<RemoveResult> {
  const k = methodKeys(store.prefix, accountId);
  const [verdict, record] = (await store.run(signInMethodRemove(), [k.account, k.passkeys, k.upstreams], [kind, field])) as [string, string?];
  return verdict === 'ok' ? { removed: record! } : { refused: verdict as 'missing' | 'last' };
}
