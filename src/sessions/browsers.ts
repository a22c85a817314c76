import { hash } from 'node:crypto';

import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';

/** How long a browser stays known after its last sign-in: a browser unused this long counts as new again. */
const KNOWN_FOR_MS = 400 * 24 * 60 * 60_000;
/** Browsers an account keeps; past it the least recently used are forgotten (and would be "new" again). */
const MOST = 50;

/** Key layout; documented in docs/redis-keys.md. */
export function browserKeys(prefix: string) {
  return {
    /** Sorted set: browser hash -> last sign-in (ms); expires 400 days after the last. */
    browsers: (accountId: string) => `${prefix}account:{${accountId}}:browsers`,
  };
}

/**
 * The browsers each person signed in from (the plugin's browser cookie, kept
 * as a SHA-256): whether a sign-in comes from one the account has not used,
 * for the "new browser" security notice. The very first browser an account
 * is known in tells nothing (a new account, or the first sign-in since the
 * plugin counts them).
 */
export function createBrowsers(store: Store) {
  const keys = browserKeys(store.prefix);
  return {
    keys,
    async seen(accountId: string, browserId: string, at = Date.now()): Promise<'first' | 'known' | 'new'> {
      return await store.run(commands.browserSeen(), [keys.browsers(accountId)], [hash('sha256', browserId, 'base64url'), at, KNOWN_FOR_MS, MOST]) as 'first' | 'known' | 'new';
    },
  };
}

export type Browsers = ReturnType<typeof createBrowsers>;
