import { isLocale, type Locale } from '../i18n/index.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';

/**
 * What the person chose in the console (persistent): the language, which
 * wins over the host's contact locale for the plugin's pages and letters.
 * Key `<prefix>account:{<id>}:prefs`, documented in the README.
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
  };
}

export type Preferences = ReturnType<typeof createPreferences>;
