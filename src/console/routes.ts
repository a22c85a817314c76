import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import { readForm } from '../http/body.ts';
import type { Csrf } from '../http/csrf.ts';
import { crossOrigin, jsonErrors, loginRequired, PluginError } from '../http/errors.ts';
import { sameOrigin } from '../http/origin.ts';
import { htmlErrors, sendPage } from '../http/page.ts';
import { negotiateLocale } from '../i18n/index.ts';
import type { ContactLookup, Logger } from '../options.ts';
import type { Organizations } from '../orgs/organizations.ts';
import { SITE_ACCESS_PROMPT } from '../provider/site-access-policy.ts';
import type { SiteAccess } from '../sites/access.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { blockedSitePage } from '../../views/blocked-site.ts';

export interface ConsoleDeps {
  provider: Provider;
  sites: ConnectedSites;
  orgs: Organizations;
  access: SiteAccess;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
  logger: Logger;
}

interface ConsoleState {
  accountId: string;
}

const notFound = (what: string) => new PluginError(404, 'not_found', what);

/**
 * The plugin's own routes under /console: the blocked-site page of a sign-in,
 * and the JSON API of the person's console (Connected sites, organizations).
 */
export function consoleRoutes(deps: ConsoleDeps): Router {
  const { provider, sites, orgs, access, csrf, serviceName } = deps;
  const router = new Router();

  /* The blocked-site page: a sign-in at a site the person blocked. */
  const page = new Router({ prefix: '/console/blocked-site/:uid' });
  page.use(htmlErrors(serviceName));

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
    await access.unblockSite(s.accountId, s.client.clientId);
    // The provider asks the policy again: the site is allowed now, and asks for consent anew.
    await finish(ctx, {});
  });

  page.post('/cancel', async (ctx) => {
    const s = await loadBlocked(ctx);
    csrf.verify('blocked-site', s.details.uid, (await readForm(ctx)).csrf);
    await finish(ctx, { error: 'access_denied', error_description: 'the person has blocked this site' });
  });

  /* The console's JSON API: the signed-in person of the service session. */
  const api = new Router<ConsoleState>({ prefix: '/console/api' });
  api.use(jsonErrors(deps.logger));
  api.use(async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !sameOrigin(ctx, provider.issuer)) throw crossOrigin();
    const session = await provider.Session.get(ctx as never);
    if (!session.accountId) throw loginRequired();
    ctx.state.accountId = session.accountId;
    await next();
  });

  api.get('/sites', async (ctx) => {
    const list = await sites.list(ctx.state.accountId);
    ctx.body = await Promise.all(list.map(async (site) => {
      const client = await provider.Client.find(site.clientId).catch(() => undefined);
      return {
        clientId: site.clientId,
        name: client?.clientName ?? site.clientId,
        uri: client?.clientUri ?? null,
        logoUri: client?.logoUri ?? null,
        firstSignInAt: new Date(site.firstSignInAt).toISOString(),
        lastSignInAt: new Date(site.lastSignInAt).toISOString(),
        scopes: site.scopes,
        offlineAccess: site.offlineAccess,
        status: site.status,
        ...(site.blockedAt !== undefined ? { blockedAt: new Date(site.blockedAt).toISOString() } : {}),
      };
    }));
  });

  api.post('/sites/:clientId/block', async (ctx) => {
    if (await access.blockSite(ctx.state.accountId, ctx.params.clientId!) === 'not_connected') throw notFound('you never signed in to this site');
    ctx.status = 204;
  });

  api.post('/sites/:clientId/unblock', async (ctx) => {
    if (await access.unblockSite(ctx.state.accountId, ctx.params.clientId!) === 'not_connected') throw notFound('you never signed in to this site');
    ctx.status = 204;
  });

  const orgAdmin: Middleware<ConsoleState> = async (ctx, next) => {
    // Unknown organization and someone else's look the same: 403.
    if (!orgs.isAdmin((ctx as unknown as { params: { orgId: string } }).params.orgId, ctx.state.accountId)) {
      throw new PluginError(403, 'access_denied', 'only the organization’s administrators may do this');
    }
    await next();
  };

  api.get('/orgs/:orgId/members', orgAdmin, async (ctx) => {
    const members = await orgs.members(ctx.params.orgId!);
    ctx.body = await Promise.all(members.map(async (m) => ({
      accountId: m.accountId,
      email: (await deps.contacts(m.accountId))?.email ?? null,
      admin: m.admin,
      status: m.removedAt === undefined ? 'member' : 'removed',
      ...(m.removedAt !== undefined ? { removedAt: new Date(m.removedAt).toISOString() } : {}),
    })));
  });

  api.delete('/orgs/:orgId/members/:accountId', orgAdmin, async (ctx) => {
    const result = await access.removeMember(ctx.params.orgId!, ctx.params.accountId!);
    if (result === 'not_member') throw notFound('no such member');
    if (result === 'admin') throw new PluginError(400, 'invalid_request', 'administrators are set in the configuration and cannot be removed here');
    ctx.status = 204;
  });

  router.use(page.routes(), page.allowedMethods());
  router.use(api.routes(), api.allowedMethods());
  return router;
}
