import Router from '@koa/router';
import type Provider from 'oidc-provider';

import type { Csrf } from '../http/csrf.ts';
import { htmlErrors } from '../http/error-page.ts';
import { PluginError } from '../http/errors.ts';
import { sendPage } from '../http/page.ts';
import { siteHosts } from '../sites/own-site.ts';
import type { Senders } from '../notify/senders.ts';
import type { ContactLookup, Logger } from '../host.ts';
import type { RemoveAccessResult, SiteAccess } from '../sites/access.ts';
import { ownLink, removeAccessConfirmPage, removeAllConfirmPage, siteDetailPage, type SiteDetailView } from '../../views/console/site-detail.ts';
import { consoleApiGuards, notFound, siteJson, type ApiState } from './api.ts';
import type { ConsoleData, SiteView } from './data.ts';
import { backWithNotice, consoleForm, pageCommon, signedInPages, type PageState } from './page-context.ts';

export interface SiteRoutesDeps {
  provider: Provider;
  data: ConsoleData;
  senders: Senders;
  access: SiteAccess;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
  logger: Logger;
}

/**
 * A connected site's own page and Remove access (docs/console.md "The person's
 * console"): `/console/sites/:clientId` with its confirmation pages, and the
 * same through the JSON API.
 */
export function siteRoutes(deps: SiteRoutesDeps): Router[] {
  const { provider, data, access } = deps;

  /** The site as the person knows it, or 404 for a site they never signed in to. */
  async function siteOf(accountId: string, clientId: string): Promise<SiteView> {
    const site = (await data.sites(accountId)).find((s) => s.clientId === clientId);
    if (!site) throw notFound('you never signed in to this site');
    return site;
  }

  /** Remove access refused: a site never used (404), a blocked one (409: Block keeps its meaning until Unblock). */
  function refuseUnless(result: RemoveAccessResult): void {
    if (result === 'not_connected') throw notFound('you never signed in to this site');
    if (result === 'blocked') throw new PluginError('site_blocked', 'the site is blocked: it has no access to remove; unblock it first');
  }

  /** What the site's registration says about it, and what the person set for its messages. */
  async function detail(accountId: string, clientId: string): Promise<SiteDetailView> {
    const [site, client, settings] = await Promise.all([
      siteOf(accountId, clientId),
      provider.Client.find(clientId).catch(() => undefined),
      deps.senders.get(accountId, clientId),
    ]);
    const meta = client?.metadata() as { policy_uri?: string; tos_uri?: string } | undefined;
    return {
      ...site,
      policyUri: meta?.policy_uri ?? null,
      tosUri: meta?.tos_uri ?? null,
      ownHosts: client ? [...siteHosts(client)] : [],
      messages: site.status === 'connected' ? settings : null,
    };
  }

  /* ---------- Pages ---------- */

  const pages = new Router<PageState>({ prefix: '/console' });
  pages.use(htmlErrors(deps.serviceName, () => provider.issuer));
  const signedIn = signedInPages(deps);
  const common = (ctx: { state: PageState }) => pageCommon(ctx, deps.serviceName);

  pages.get('/remove-access', signedIn, async (ctx) => {
    sendPage(ctx, removeAllConfirmPage({ ...common(ctx), sites: await data.sites(ctx.state.accountId) }));
  });

  pages.post('/remove-access', signedIn, async (ctx) => {
    await consoleForm(deps, ctx);
    await access.removeAllAccess(ctx.state.accountId);
    backWithNotice(ctx, '/console', 'all_access_removed');
  });

  pages.get('/sites/:clientId', signedIn, async (ctx) => {
    const notice = ctx.query.done === 'access_removed' ? 'access_removed' as const : undefined;
    sendPage(ctx, siteDetailPage({ ...common(ctx), site: await detail(ctx.state.accountId, ctx.params.clientId!), notice }));
  });

  pages.get('/sites/:clientId/remove-access', signedIn, async (ctx) => {
    const site = await siteOf(ctx.state.accountId, ctx.params.clientId!);
    if (site.status !== 'connected') throw new PluginError('not_found', 'this site has no access to remove');
    sendPage(ctx, removeAccessConfirmPage({ ...common(ctx), site, from: ctx.query.from === 'site' ? 'site' : 'console' }));
  });

  pages.post('/sites/:clientId/remove-access', signedIn, async (ctx) => {
    const fields = await consoleForm(deps, ctx);
    const clientId = ctx.params.clientId!;
    refuseUnless(await access.removeAccess(ctx.state.accountId, clientId));
    const back = fields.from === 'site' ? `/console/sites/${encodeURIComponent(clientId)}` : '/console';
    backWithNotice(ctx, back, 'access_removed');
  });

  /* ---------- JSON API ---------- */

  const api = new Router<ApiState>({ prefix: '/console/api' });
  api.use(...consoleApiGuards(deps));

  api.get('/sites/:clientId', async (ctx) => {
    const { ownHosts, policyUri, tosUri, ...site } = await detail(ctx.state.accountId, ctx.params.clientId!);
    ctx.body = {
      ...siteJson(site),
      // Only the site's own https addresses, as the page links them.
      uri: ownLink(site.uri, ownHosts)?.href ?? null,
      policyUri: ownLink(policyUri, ownHosts)?.href ?? null,
      tosUri: ownLink(tosUri, ownHosts)?.href ?? null,
    };
  });

  api.post('/sites/:clientId/remove-access', async (ctx) => {
    refuseUnless(await access.removeAccess(ctx.state.accountId, ctx.params.clientId!));
    ctx.status = 204;
  });

  api.post('/remove-access', async (ctx) => {
    ctx.body = { removed: await access.removeAllAccess(ctx.state.accountId) };
  });

  return [api, pages];
}
