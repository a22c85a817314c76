import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import { readForm } from '../http/body.ts';
import type { Csrf } from '../http/csrf.ts';
import { sendPage } from '../http/page.ts';
import { htmlErrors } from '../http/error-page.ts';
import { negotiateLocale } from '../i18n/index.ts';
import type { ContactLookup } from '../host.ts';
import { SITE_ACCESS_PROMPT } from '../provider/site-access-policy.ts';
import type { SiteAccess } from '../sites/access.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { blockedSitePage } from '../../views/blocked-site.ts';
import { signInAgainPath, type RecentSignIns } from './recent-sign-in.ts';

export interface BlockedSiteDeps {
  provider: Provider;
  sites: ConnectedSites;
  access: SiteAccess;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
  recent: RecentSignIns;
}

/**
 * The page of the `site_access` prompt: a sign-in at a site the person
 * blocked. "Unblock and continue" or "Cancel" (access_denied to the site).
 */
export function blockedSiteRoutes(deps: BlockedSiteDeps): Router {
  const { provider, sites, access, csrf, serviceName } = deps;
  const page = new Router({ prefix: '/console/blocked-site/:uid' });
  page.use(htmlErrors(serviceName, () => provider.issuer));

  async function loadBlocked(ctx: Context) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    // The cookie names the interaction; the URL must name the same one, of our prompt.
    if (details.uid !== ctx.params.uid || details.prompt.name !== SITE_ACCESS_PROMPT) {
      throw new errors.SessionNotFound('interaction mismatch');
    }
    const clientId = String(details.params.client_id);
    const accountId = details.session?.accountId;
    const client = await provider.Client.find(clientId);
    if (!accountId || !client) throw new errors.SessionNotFound('interaction without account or client');
    return { details, accountId, client, base: `/console/blocked-site/${encodeURIComponent(details.uid)}` };
  }

  async function finish(ctx: Context, result: Parameters<Provider['interactionResult']>[2]) {
    const redirectTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(redirectTo);
  }

  page.get('/', async (ctx) => {
    const s = await loadBlocked(ctx);
    const site = await sites.get(s.accountId, s.client.clientId);
    if (site?.status !== 'blocked') {
      // Unblocked meanwhile (console, other tab): nothing to ask.
      await finish(ctx, {});
      return;
    }
    const contact = await deps.contacts(s.accountId);
    const uiLocales = s.details.params.ui_locales;
    sendPage(ctx, blockedSitePage({
      locale: negotiateLocale({ preferred: contact?.locale, uiLocales: typeof uiLocales === 'string' ? uiLocales : undefined, acceptLanguage: ctx.get('accept-language') }),
      serviceName,
      clientName: s.client.clientName ?? s.client.clientId,
      blockedAt: site.blockedAt ?? site.lastSignInAt,
      accountEmail: contact?.email,
      unblockAction: `${s.base}/unblock`,
      cancelAction: `${s.base}/cancel`,
      csrf: csrf.token('blocked-site', s.details.uid),
      formAction: [...(s.client.redirectUris ?? [])],
    }));
  });

  page.post('/unblock', async (ctx) => {
    const s = await loadBlocked(ctx);
    csrf.verify('blocked-site', s.details.uid, (await readForm(ctx)).csrf);
    // Unblocking needs a recent sign-in of the interaction's account; the
    // fresh sign-in comes back to this page, where Unblock is pressed again.
    if (!(await deps.recent.isRecent(ctx, s.accountId))) {
      ctx.status = 303;
      ctx.redirect(signInAgainPath({ action: 'unblock_site', back: s.base }));
      return;
    }
    await access.unblockSite(s.accountId, s.client.clientId);
    // The provider asks the policy again: the site is allowed now, and asks for consent anew.
    await finish(ctx, {});
  });

  page.post('/cancel', async (ctx) => {
    const s = await loadBlocked(ctx);
    csrf.verify('blocked-site', s.details.uid, (await readForm(ctx)).csrf);
    await finish(ctx, { error: 'access_denied', error_description: 'the person has blocked this site' });
  });

  return page;
}
