import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

import { isCategory, type Category } from './categories.ts';

/** What an unsubscribe link stands for: this person, this site, this category. No address in it. */
export interface UnsubscribeClaim {
  accountId: string;
  clientId: string;
  category: Category;
}

/**
 * Tokens of the letters' unsubscribe links (RFC 8058 one-click): the claim and
 * an HMAC-SHA256 over it, with the id of the key that signed it, so keys can
 * rotate (newest first; links signed with a key still listed keep working).
 * No expiry: a link in an old letter must still stop the letters.
 */
export function createUnsubscribeTokens(keys: () => readonly (string | Buffer)[]) {
  const kid = (key: string | Buffer) => createHash('sha256').update(key).digest('base64url').slice(0, 8);
  const mac = (key: string | Buffer, payload: string) => createHmac('sha256', key).update(`unsubscribe\0${payload}`).digest();

  return {
    sign(claim: UnsubscribeClaim): string {
      const key = keys()[0];
      if (key === undefined) throw new Error('no key to sign unsubscribe links with');
      const payload = Buffer.from(JSON.stringify([kid(key), claim.accountId, claim.clientId, claim.category])).toString('base64url');
      return `${payload}.${mac(key, payload).toString('base64url')}`;
    },
    /** The claim, or undefined for anything not signed by a current key (compared in constant time). */
    verify(token: string): UnsubscribeClaim | undefined {
      const [payload, signature, extra] = token.split('.');
      if (!payload || !signature || extra !== undefined) return undefined;
      let parts: unknown;
      try {
        parts = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!Array.isArray(parts) || parts.length !== 4 || !parts.every((p) => typeof p === 'string')) return undefined;
      const [id, accountId, clientId, category] = parts as string[];
      const key = keys().find((k) => kid(k) === id);
      if (key === undefined || !isCategory(category)) return undefined;
      const expected = mac(key, payload);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      return { accountId: accountId!, clientId: clientId!, category };
    },
  };
}

export type UnsubscribeTokens = ReturnType<typeof createUnsubscribeTokens>;
