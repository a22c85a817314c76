import type { SignoutNotify } from '../../src/index.ts';
import type { Store } from '../../src/store-kit.ts';
import { addressKey, addressKeyForms, normalizeEmail } from './accounts.ts';
import { digest, methodKeys } from './sign-in-methods.ts';

/** A SCAN pattern that matches the text literally. */
const literal = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Deletes a person of the reference provider ("Delete my account" in the
 * console): first the keys that lead to the account (its address, its
 * passkeys' credentials, its linked accounts, and the sign-in code's
 * browsers, limits and locks for its address), then the plugin's
 * deleteAccount, which erases every `account:{<id>}` key (the account
 * record, its passkeys and links among them) last. Safe to call again: the
 * account record, read first, goes last.
 */
export function accountDeletion(store: Store, plugin: Pick<SignoutNotify, 'deleteAccount'>) {
  const p = store.prefix;
  return async function deleteAccount(accountId: string): Promise<void> {
    const k = methodKeys(p, accountId);
    const [account, passkeys, upstreams] = await Promise.all([store.hgetall(k.account), store.hgetall(k.passkeys), store.hgetall(k.upstreams)]);
    const keys: string[] = [];
    if (account.email) {
      for (const form of addressKeyForms(account.email)) {
        // The address leads here only while it is this account's.
        if ((await store.get(`${p}account-email:{${form}}`)) === accountId) keys.push(`${p}account-email:{${form}}`);
      }
      // The sign-in code's keys: by addressKey, or (written before) by the address as the account keeps it.
      for (const form of new Set([addressKey(account.email), normalizeEmail(account.email)])) {
        keys.push(`${p}login-device:{${form}}`);
        for (const pattern of [`rate:login-address:{${literal(form)}}:*`, `login-failures:{${literal(form)}}:*`]) {
          for await (const key of store.scan(pattern)) keys.push(key);
        }
      }
    }
    for (const credentialId of Object.keys(passkeys)) keys.push(`${p}passkey:{${digest(credentialId)}}`);
    for (const [upstream, json] of Object.entries(upstreams)) {
      const { sub } = JSON.parse(json) as { sub: string };
      keys.push(`${p}upstream:{${upstream}:${digest(sub)}}`);
    }
    await store.del(keys);
    await plugin.deleteAccount(accountId);
  };
}
