import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import type { Context } from 'koa';

const COOKIE = 'osn.browser';
const MAX_AGE_MS = 400 * 24 * 60 * 60_000;

/**
 * A long-lived random id per browser, in a cookie signed with the service's
 * key, set by the sign-in pages. The sign-in's limits keep an address'
 * counters apart for each browser that signed in as that address before
 * (login-codes.ts), so nobody can lock a person out of a browser they use.
 */
export function browserId(secret: string) {
  const sign = (id: string) => createHmac('sha256', secret).update(`browser\0${id}`).digest('base64url');
  const valid = (value: string | undefined): string | undefined => {
    const [id, mac] = (value ?? '').split('.');
    if (!id || !mac) return undefined;
    const expected = Buffer.from(sign(id));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given) ? id : undefined;
  };
  return {
    /** The browser's id; a new one (and its cookie) when it has none or a forged one. */
    of(ctx: Context): string {
      const known = valid(ctx.cookies.get(COOKIE));
      if (known) return known;
      const id = randomBytes(16).toString('base64url');
      ctx.cookies.set(COOKIE, `${id}.${sign(id)}`, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: MAX_AGE_MS, secure: ctx.secure, overwrite: true });
      return id;
    },
  };
}
