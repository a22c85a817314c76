import { randomUUID } from 'node:crypto';

import * as commands from '../../src/store/commands.ts';
import type { Store } from '../../src/store/store.ts';

export interface Account {
  accountId: string;
  email: string;
  locale?: string | undefined;
  createdAt: number;
}

/**
 * The reference provider's accounts: persistent data, no TTL.
 * Keys: `<prefix>account:{<id>}` hash { email, locale, createdAt } and
 * `<prefix>account-email:{<email>}` -> id.
 */
export function createAccounts(store: Store) {
  const accountKey = (id: string) => `${store.prefix}account:{${id}}`;
  const emailKey = (email: string) => `${store.prefix}account-email:{${email}}`;

  async function get(accountId: string): Promise<Account | undefined> {
    const record = await store.hgetall(accountKey(accountId));
    if (!record.email) return undefined;
    return { accountId, email: record.email, locale: record.locale, createdAt: Number(record.createdAt) };
  }

  return {
    get,
    /** The account of an address, created on first sign-in. Addresses are compared lower-cased. */
    async findOrCreate(address: string): Promise<Account> {
      const email = normalizeEmail(address);
      const accountId = (await store.run(commands.claim(), [emailKey(email)], [randomUUID()])) as string;
      const existing = await get(accountId);
      if (existing) return existing;
      const createdAt = Date.now();
      await store.run(commands.hset(), [accountKey(accountId)], ['email', email, 'createdAt', createdAt]);
      return { accountId, email, createdAt };
    },
    async findByEmail(address: string): Promise<Account | undefined> {
      const accountId = await store.get(emailKey(normalizeEmail(address)));
      return accountId ? get(accountId) : undefined;
    },
    async setLocale(accountId: string, locale: string): Promise<void> {
      await store.run(commands.hset(), [accountKey(accountId)], ['locale', locale]);
    },
  };
}

export type Accounts = ReturnType<typeof createAccounts>;

export function normalizeEmail(address: string): string {
  return address.trim().toLowerCase();
}
