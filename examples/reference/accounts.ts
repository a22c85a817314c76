import { randomUUID } from 'node:crypto';
import { domainToASCII, domainToUnicode } from 'node:url';

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
 * `<prefix>account-email:{<addressKey(email)>}` -> id. Keys of the forms
 * written before (trim and lower-case only; NFKC and case fold without the
 * domain's IDNA form) are read as well (addressKeyForms, docs/upgrading.md).
 */
export function createAccounts(store: Store) {
  const accountKey = (id: string) => methodKeys(store.prefix, id).account;
  const emailKey = (key: string) => `${store.prefix}account-email:{${key}}`;

  /** The account id of an address: under its key, else under the first of its earlier keys that has one. */
  async function idOf(address: string): Promise<string | undefined> {
    const [key, ...earlier] = addressKeyForms(address);
    const found = await store.get(emailKey(key!));
    if (found) return found;
    // A miss (a new address, most often) reads the earlier forms in one round.
    const ids = await Promise.all(earlier.map((form) => store.get(emailKey(form))));
    return ids.find((id) => id) ?? undefined;
  }

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

  /**
   * The account of an address, created on first sign-in (`created`).
   * Addresses are compared by addressKey: one that collides with an
   * account's is that account (never a second one). `locale` (the language
   * the sign-in pages were shown in) becomes the account's when it has none
   * yet: its first sign-in (accounts an organization provisioned have none
   * until then).
   */
  async function claimAddress(address: string, first: { locale?: string; name?: string | undefined } = {}): Promise<{ account: Account; created: boolean }> {
    const email = normalizeEmail(address);
    const fresh = randomUUID();
    const accountId = (await idOf(address)) ?? (await store.run(claim(), [emailKey(addressKey(address))], [fresh])) as string;
    const existing = await get(accountId);
    if (existing) {
      if (existing.locale || !first.locale) return { account: existing, created: false };
      await store.run(hsetnx(), [accountKey(accountId)], ['locale', first.locale]);
      return { account: (await get(accountId))!, created: false };
    }
    const createdAt = Date.now();
    const locale = first.locale ? ['locale', first.locale] : [];
    const name = first.name ? ['name', first.name] : [];
    await store.run(hset(), [accountKey(accountId)], ['email', email, 'createdAt', createdAt, ...locale, ...name]);
    return { account: { accountId, email, createdAt, ...(first.locale ? { locale: first.locale } : {}), ...(first.name ? { name: first.name } : {}) }, created: accountId === fresh };
  }

  return {
    get,
    claim: claimAddress,
    /** The account of an address, created on first sign-in (claim without saying which). */
    async findOrCreate(address: string, first: { locale?: string; name?: string | undefined } = {}): Promise<Account> {
      return (await claimAddress(address, first)).account;
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
    /** The account of an address (compared by addressKey), if any. */
    async findByEmail(address: string): Promise<Account | undefined> {
      const accountId = await idOf(address);
      return accountId ? get(accountId) : undefined;
    },
    async setLocale(accountId: string, locale: string): Promise<void> {
      await store.run(hset(), [accountKey(accountId)], ['locale', locale]);
    },
  };
}

export type Accounts = ReturnType<typeof createAccounts>;

/** The address as an account keeps it and letters go to: trimmed and lower-cased, otherwise as given. */
export function normalizeEmail(address: string): string {
  return address.trim().toLowerCase();
}

/**
 * A domain as configured or as the part of an address after its last `@`:
 * NFKC, lower-cased, without a trailing dot, in its ASCII (punycode) form
 * (UTS 46, as `domainToASCII`). '' when it is not a domain name of two
 * labels or more. Addresses (addressKey) and an upstream's
 * `trustedEmailDomains` (upstreams.ts trustedDomain) both go through it.
 */
export function normalizeDomain(domain: string): string {
  const ascii = domainToASCII(domain.trim().normalize('NFKC').toLowerCase().replace(/\.$/, ''));
  return /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(ascii) ? ascii : '';
}

/**
 * NFKC, then a full case fold, done as `toLowerCase()`, `toUpperCase()`,
 * `toLowerCase()` (the root locale's mappings, no Turkish or Lithuanian
 * rules: `toLowerCase()` alone is a simple lower-casing, it keeps `ß` and a
 * final sigma apart), then NFKC again.
 */
function fold(text: string): string {
  return text.trim().normalize('NFKC').toLowerCase().toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * The form in which two addresses are compared (docs/security.md "Names and
 * addresses"): the part before the last `@` trimmed, NFKC and fully case
 * folded (fold: U+212A KELVIN SIGN and U+FF4B FULLWIDTH K both become `k`,
 * `ß` and U+1E9E CAPITAL SHARP S become `ss`, `ς` and `σ` one letter); the
 * domain as normalizeDomain gives it, so `v@bücher.test` is
 * `v@xn--bcher-kva.test` and `boss@corp.test.` is `boss@corp.test` (a
 * domain that is no domain name is folded as the rest).
 * It is a key only: letters go to the address as normalizeEmail keeps it.
 */
export function addressKey(address: string): string {
  const text = address.trim().normalize('NFKC');
  const at = text.lastIndexOf('@');
  const domain = at > 0 ? normalizeDomain(text.slice(at + 1)) : '';
  return domain ? `${fold(text.slice(0, at))}@${domain}` : fold(text);
}

/**
 * The keys an address may be stored under, addressKey first, then the
 * earlier forms of the same mailbox (docs/upgrading.md): the key before the
 * domain's IDNA form (fold of the whole address) and the one before that
 * (normalizeEmail), each of the address as given, of its domain in ASCII
 * and in Unicode, with and without a trailing dot. Accounts are found under
 * any of them (new keys are written in the first form); a deletion removes
 * every one that leads to the account.
 */
export function addressKeyForms(address: string): string[] {
  const key = addressKey(address);
  const text = address.trim().normalize('NFKC');
  const at = text.lastIndexOf('@');
  const ascii = at > 0 ? normalizeDomain(text.slice(at + 1)) : '';
  const spellings = [address];
  if (ascii) {
    for (const domain of new Set([ascii, domainToUnicode(ascii)])) spellings.push(`${text.slice(0, at)}@${domain}`, `${text.slice(0, at)}@${domain}.`);
  }
  return [...new Set([key, ...spellings.flatMap((spelling) => [fold(spelling), normalizeEmail(spelling)])])];
}

/**
 * Whether a name looks like an address: it holds an `@` once NFKC is
 * applied (U+FF20 FULLWIDTH and U+FE6B SMALL COMMERCIAL AT count). Such a
 * name is refused for an account (docs/security.md "Names and addresses").
 */
export function looksLikeAddress(name: string): boolean {
  return name.normalize('NFKC').includes('@');
}

/** How pages name the account: its address, else its name. */
export function accountLabel(account: Pick<Account, 'email' | 'name'> | undefined): string {
  return account?.email ?? account?.name ?? '';
}
