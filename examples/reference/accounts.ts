import { randomUUID } from 'node:crypto';

import { claim, hset, hsetnx, type Store } from '../../src/store-kit.ts';
import { methodKeys } from './sign-in-methods.ts';

export interface Account {
  accountId: string;
  /** The address the person signs in with by code; none for an account made with a passkey or an upstream that gave no verified address. */
  email?: string | undefined;
  /** The name the person gave (passkey sign-up) or the upstream's `name`; shown where there is no address. */
  name?: string | undefined;
  locale?: string | undefined;
  createdAt: number;
}

/**
 * The reference provider's accounts: persistent data, no TTL.
 * Keys: `<prefix>account:{<id>}` hash { email?, name?, locale, createdAt } and
 * `<prefix>account-email:{<email>}` -> id.
 */
export function createAccounts(store: Store) {
  const accountKey = (id: string) => methodKeys(store.prefix, id).account;
  const emailKey = (email: string) => `${store.prefix}account-email:{${email}}`;

  async function get(accountId: string): Promise<Account | undefined> {
    const record = await store.hgetall(accountKey(accountId));
    if (!record.createdAt) return undefined;
    return {
      accountId,
      ...(record.email ? { email: record.email } : {}),
      ...(record.name ? { name: record.name } : {}),
      locale: record.locale,
      createdAt: Number(record.createdAt),
    };
  }

  return {
    get,
    /**
     * The account of an address, created on first sign-in. Addresses are
     * compared lower-cased. `locale` (the language the sign-in pages were
     * shown in) becomes the account's when it has none yet: its first sign-in
     * (accounts an organization provisioned have none until then).
     */
    async findOrCreate(address: string, first: { locale?: string; name?: string | undefined } = {}): Promise<Account> {
      const email = normalizeEmail(address);
      const accountId = (await store.run(claim(), [emailKey(email)], [randomUUID()])) as string;
      const existing = await get(accountId);
      if (existing) {
        if (existing.locale || !first.locale) return existing;
        await store.run(hsetnx(), [accountKey(accountId)], ['locale', first.locale]);
        return (await get(accountId))!;
      }
      const createdAt = Date.now();
      const locale = first.locale ? ['locale', first.locale] : [];
      const name = first.name ? ['name', first.name] : [];
      await store.run(hset(), [accountKey(accountId)], ['email', email, 'createdAt', createdAt, ...locale, ...name]);
      return { accountId, email, createdAt, ...(first.locale ? { locale: first.locale } : {}), ...(first.name ? { name: first.name } : {}) };
    },
    /**
     * An account without an address (a passkey sign-up, an upstream that
     * vouched for none): it signs in by its passkeys and linked accounts only.
     * `accountId` when the caller chose it beforehand (the passkey's user handle).
     */
    async create(first: { accountId?: string; name?: string | undefined; locale?: string | undefined }): Promise<Account> {
      const accountId = first.accountId ?? randomUUID();
      const createdAt = Date.now();
      const fields = ['createdAt', createdAt, ...(first.name ? ['name', first.name] : []), ...(first.locale ? ['locale', first.locale] : [])];
      await store.run(hset(), [accountKey(accountId)], fields);
      return { accountId, createdAt, ...(first.name ? { name: first.name } : {}), ...(first.locale ? { locale: first.locale } : {}) };
    },
    async findByEmail(address: string): Promise<Account | undefined> {
      const accountId = await store.get(emailKey(normalizeEmail(address)));
      return accountId ? get(accountId) : undefined;
    },
    async setLocale(accountId: string, locale: string): Promise<void> {
      await store.run(hset(), [accountKey(accountId)], ['locale', locale]);
    },
  };
}

export type Accounts = ReturnType<typeof createAccounts>;

export function normalizeEmail(address: string): string {
  return address.trim().toLowerCase();
}

/** How pages name the account: its address, else its name. */
export function accountLabel(account: Pick<Account, 'email' | 'name'> | undefined): string {
  return account?.email ?? account?.name ?? '';
}
