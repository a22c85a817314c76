import { isLocale, type Locale } from './i18n/index.ts';
import * as commands from './store/commands.ts';
import type { Store } from './store/store.ts';

/**
 * What the person chose in the console (persistent): the language, which
 * wins over the host's contact locale for the plugin's pages and letters.
 * Where the host knows no language for the person, the one of their first
 * sign-in is kept here (recordSignIns).
 * Key `<prefix>account:{<id>}:prefs`, documented in docs/redis-keys.md.
 */
export function createPreferences(store: Store) {
  const key = (accountId: string) => `${store.prefix}account:{${accountId}}:prefs`;
  return {
    async locale(accountId: string): Promise<Locale | undefined> {
      const [value] = await store.hmget(key(accountId), ['locale']);
      return isLocale(value) ? value : undefined;
    },
    async setLocale(accountId: string, locale: Locale): Promise<void> {
      await store.run(commands.hset(), [key(accountId)], ['locale', locale]);
    },
    /** The language of the person's first sign-in, kept unless one is set already. */
    async setFirstLocale(accountId: string, locale: Locale): Promise<void> {
      await store.run(commands.hsetnx(), [key(accountId)], ['locale', locale]);
    },
  };
}

export type Preferences = ReturnType<typeof createPreferences>;
