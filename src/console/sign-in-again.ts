import Router from '@koa/router';
import type Provider from 'oidc-provider';

import { serviceSession } from '../http/context.ts';
import { htmlErrors } from '../http/error-page.ts';
import { sendPage } from '../http/page.ts';
import { negotiateLocale } from '../i18n/index.ts';
import type { ContactLookup } from '../host.ts';
import { signInAgainPage } from '../../views/console/sign-in-again.ts';
import { consoleSignInUrl, isConsoleBack } from './page-context.ts';
import { isRecentSignInAction, type RecentSignIns } from './recent-sign-in.ts';

export interface SignInAgainDeps {
  provider: Provider;
  contacts: ContactLookup;
  serviceName: string;
  recent: RecentSignIns;
}

/**
 * `GET /console/sign-in-again?action=&back=`: the page before a fresh
 * sign-in (docs/security.md "A recent sign-in for what adds access"). The
 * action only picks one of the service's own sentences and `back` must be a
 * console page, so a link to this page can say nothing else and send nobody
 * elsewhere. Nothing here acts: someone signed in recently meanwhile goes
 * straight back to press the action again; someone not signed in at all signs in.
 */
export function signInAgainRoutes(deps: SignInAgainDeps): Router {
  const { provider, serviceName } = deps;
  const router = new Router({ prefix: '/console/sign-in-again' });
  router.use(htmlErrors(serviceName, () => provider.issuer));

  router.get('/', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const action = isRecentSignInAction(ctx.query.action) ? ctx.query.action : 'continue';
    const back = typeof ctx.query.back === 'string' && isConsoleBack(ctx.query.back) ? ctx.query.back : '/console';
    const session = await serviceSession(provider, ctx);
    if (!session.accountId || deps.recent.recentSession(session)) {
      ctx.status = 303;
      ctx.redirect(session.accountId ? back : consoleSignInUrl(provider, back));
      return;
    }
    const contact = await deps.contacts(session.accountId);
    sendPage(ctx, signInAgainPage({
      locale: negotiateLocale({ preferred: contact?.locale, acceptLanguage: ctx.get('accept-language') }),
      serviceName,
      accountEmail: contact?.email ?? contact?.name,
      why: `reauth.why.${action}`,
      explain: action === 'delete_account' ? 'reauth.explain.delete_account' : undefined,
      signInUrl: consoleSignInUrl(provider, back, true),
      back,
    }));
  });

  return router;
}
