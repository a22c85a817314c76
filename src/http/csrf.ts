import { createHmac, timingSafeEqual } from 'node:crypto';

import { PluginError } from './errors.ts';

/**
 * CSRF tokens for the plugin's forms: an HMAC of what the form acts on (its
 * purpose and, e.g., the interaction uid or the session's account), so a
 * token from one form or one person is useless for another. Compared in
 * constant time.
 */
export function createCsrf(secret: () => string | Buffer) {
  const token = (purpose: string, binding: string) =>
    createHmac('sha256', secret()).update(`${purpose}\0${binding}`).digest('base64url');
  return {
    token,
    /** Throws invalid_request when the token does not match. */
    verify(purpose: string, binding: string, given: string | undefined): void {
      const expected = Buffer.from(token(purpose, binding));
      const actual = Buffer.from(given ?? '');
      if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
        throw new PluginError('form_expired', 'the form is out of date; reload the page');
      }
    },
  };
}

export type Csrf = ReturnType<typeof createCsrf>;
