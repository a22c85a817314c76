import type { Context } from 'koa';
import type Provider from 'oidc-provider';

import type { Preferences } from '../../src/index.ts';
import { negotiateLocale, signedInAccount, type Locale } from '../../src/pages.ts';
import type { Account, Accounts } from './accounts.ts';

/** The person of a console request: their account and the language their pages are in. */
export interface ConsoleRequestPerson { account: Account; locale: Locale }

/**
 * Who is asking, for the reference provider's own console sections: the
 * account of the request's service session (none when signed out or the
 * account is gone), in the language they chose, else their browser's.
 */
export function consolePerson(provider: Provider, accounts: Accounts, preferences: Preferences) {
  return async (ctx: Context): Promise<ConsoleRequestPerson | undefined> => {
    const accountId = await signedInAccount(provider, ctx);
    const account = accountId ? await accounts.get(accountId) : undefined;
    if (!account) return undefined;
    const preferred = (await preferences.locale(account.accountId)) ?? account.locale;
    return { account, locale: negotiateLocale({ preferred, acceptLanguage: ctx.get('accept-language') }) };
  };
}
