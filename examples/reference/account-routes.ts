import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { ConsolePerson, ConsoleSection, Logger, Preferences, RecentSignInRequest, SignoutNotify } from '../../src/index.ts';
import { createCsrf, crossOrigin, htmlErrors, negotiateLocale, readForm, sameOrigin, sendPage, t } from '../../src/pages.ts';
import type { Accounts } from './accounts.ts';
import { consolePerson } from './console-person.ts';
import { accountDeletedPage, accountSection, deleteAccountPage } from './views/console/account.ts';

export interface AccountRoutesDeps {
  provider: Provider;
  accounts: Accounts;
  preferences: Preferences;
  logger: Logger;
  serviceName: string;
  /** Key of these forms' CSRF tokens. */
  secret: string;
  recentSignIn: SignoutNotify['recentSignIn'];
  /** The reference provider's deleteAccount (its own records, then the plugin's). */
  deleteAccount: (accountId: string) => Promise<void>;
}

const DELETE_ACCOUNT: RecentSignInRequest = { action: 'delete_account', back: '/console/delete-account' };

/**
 * The console's "Your account" section (a host section) and "Delete my
 * account": GET /console/delete-account asks, POST deletes (the person's
 * service session, a request from the service's own page, their CSRF token
 * and a sign-in within `recentSignInSeconds`, else the plugin's page that
 * signs them in again and brings them back to the question), then
 * /console/account-deleted says it is done.
 */
export function accountRoutes(deps: AccountRoutesDeps) {
  const { provider, accounts, logger } = deps;
  const csrf = createCsrf(() => deps.secret);
  const token = (accountId: string) => csrf.token('console-account', accountId);

  function sections(person: ConsolePerson): ConsoleSection[] {
    return [{ id: 'account', title: t(person.locale, 'console.account.title'), html: String(accountSection(person.locale)) }];
  }

  const signedIn = consolePerson(provider, accounts, deps.preferences);
  const person = async (ctx: Context) => {
    const who = await signedIn(ctx);
    return who && { accountId: who.account.accountId, locale: who.locale };
  };

  const router = new Router();
  router.use(htmlErrors(deps.serviceName, () => provider.issuer));

  router.get('/console/delete-account', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const who = await person(ctx);
    if (!who) {
      ctx.status = 303;
      ctx.redirect('/console');
      return;
    }
    sendPage(ctx, deleteAccountPage({ locale: who.locale, serviceName: deps.serviceName, csrf: token(who.accountId) }));
  });

  router.post('/console/delete-account', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const who = await person(ctx);
    if (!who) throw new errors.SessionNotFound('not signed in');
    if (!sameOrigin(ctx, provider.issuer)) throw crossOrigin();
    const fields = await readForm(ctx);
    csrf.verify('console-account', who.accountId, fields.csrf);
    const recent = await deps.recentSignIn(ctx, DELETE_ACCOUNT);
    if (!recent.recent) {
      ctx.status = 303;
      ctx.redirect(recent.signInAgain);
      return;
    }
    await deps.deleteAccount(who.accountId);
    logger.warn('account deleted by its owner');
    ctx.status = 303;
    ctx.redirect(`/console/account-deleted?lang=${who.locale}`);
  });

  router.get('/console/account-deleted', (ctx) => {
    const lang = typeof ctx.query.lang === 'string' ? ctx.query.lang : undefined;
    sendPage(ctx, accountDeletedPage({ locale: negotiateLocale({ preferred: lang, acceptLanguage: ctx.get('accept-language') }), serviceName: deps.serviceName }));
  });

  return { sections, routes: router };
}
