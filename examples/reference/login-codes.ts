import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

import * as commands from '../../src/store/commands.ts';
import type { Store } from '../../src/store/store.ts';

export interface LoginCodeLimits {
  /** Lifetime of a code. Default 10 minutes. */
  ttlMs: number;
  /** Wrong codes allowed before the code is void. Default 5. */
  maxAttempts: number;
  /** Codes sent to one address per window. Default 5 per 15 minutes. */
  perAddress: { limit: number; windowMs: number };
  /** Codes requested from one IP per window. Default 30 per 15 minutes. */
  perIp: { limit: number; windowMs: number };
}

export const defaultLoginCodeLimits: LoginCodeLimits = {
  ttlMs: 10 * 60_000,
  maxAttempts: 5,
  perAddress: { limit: 5, windowMs: 15 * 60_000 },
  perIp: { limit: 30, windowMs: 15 * 60_000 },
};

export type IssueResult = { code: string } | { retryAfterMs: number };
export type VerifyResult = { email: string } | { error: 'invalid' | 'expired' };

/**
 * Emailed sign-in codes, one pending code per interaction:
 * `<prefix>login-code:{<uid>}` hash { email, hash, attempts } with the code's TTL.
 * Only an HMAC of the code is stored; the winner of two correct submissions is
 * whoever deletes the record first, so a code works once.
 */
export function createLoginCodes(store: Store, secret: string, limits: LoginCodeLimits = defaultLoginCodeLimits) {
  const key = (uid: string) => `${store.prefix}login-code:{${uid}}`;
  const digest = (uid: string, code: string) => createHmac('sha256', secret).update(`${uid}\0${code}`).digest('base64url');

  async function allowed(key: string, rule: { limit: number; windowMs: number }): Promise<number> {
    const [ok, value] = (await store.run(commands.rateLimit(), [key], [rule.limit, rule.windowMs])) as [number, number];
    return ok === 1 ? 0 : value;
  }

  return {
    async issue(uid: string, email: string, ip: string): Promise<IssueResult> {
      const waits = await Promise.all([
        allowed(`${store.prefix}rate:login-address:{${email}}`, limits.perAddress),
        allowed(`${store.prefix}rate:login-ip:{${ip}}`, limits.perIp),
      ]);
      const retryAfterMs = Math.max(...waits);
      if (retryAfterMs > 0) return { retryAfterMs };
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await store.run(commands.putTtl(), [key(uid)], [limits.ttlMs, 'email', email, 'hash', digest(uid, code), 'attempts', 0]);
      return { code };
    },

    async pendingEmail(uid: string): Promise<string | undefined> {
      const [email] = await store.hmget(key(uid), ['email']);
      return email ?? undefined;
    },

    async verify(uid: string, code: string): Promise<VerifyResult> {
      const reply = (await store.run(commands.attempt(), [key(uid)], [limits.maxAttempts])) as (number | string)[];
      if (reply[0] === -1 || reply[0] === -2) return { error: 'expired' };
      const fields: Record<string, string> = {};
      for (let i = 1; i + 1 < reply.length; i += 2) fields[String(reply[i])] = String(reply[i + 1]);
      const expected = Buffer.from(fields.hash ?? '');
      const given = Buffer.from(digest(uid, code.trim()));
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { error: 'invalid' };
      const won = (await store.run(commands.del(), [key(uid)], [])) === 1;
      return won ? { email: fields.email! } : { error: 'expired' };
    },

    async cancel(uid: string): Promise<void> {
      await store.del([key(uid)]);
    },
  };
}

export type LoginCodes = ReturnType<typeof createLoginCodes>;
