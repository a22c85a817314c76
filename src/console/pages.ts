import Router, { type RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { Csrf } from '../http/csrf.ts';
import { PluginError } from '../http/errors.ts';
import { sendPage } from '../http/page.ts';
import { htmlErrors } from '../http/error-page.ts';
import { isLocale } from '../i18n/index.ts';
import { CATEGORIES, DELIVERIES, type Category, type Delivery } from '../notify/categories.ts';
import type { BackchannelLogout } from '../notify/backchannel-logout.ts';
import type { Inbox } from '../notify/inbox.ts';
import type { Senders } from '../notify/senders.ts';
import type { ContactLookup } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { SiteAccess } from '../sites/access.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { blockConfirmPage, consolePage, type ConsoleNotice } from '../../views/console.ts';
import { orgMembershipPage, orgPage, removeMemberConfirmPage } from '../../views/console/org.ts';
import { path } from '../../views/console/parts.ts';
import { CONSOLE_CALLBACK } from '../console-client.ts';
import { logoutLinesOf } from '../provider/backchannel.ts';
import type { ConsoleData } from './data.ts';
import { backWithNotice, consoleForm, isConsoleBack, pageCommon, signedInPages, type PageState } from './page-context.ts';
import type { Preferences } from '../preferences.ts';
import type { ConsoleSections } from '../host.ts';
import { HOST_NOTICE, hostSections } from './sections.ts';
import type { RecentSignIns } from './recent-sign-in.ts';

export interface ConsolePagesDeps {
  provider: Provider;
  data: ConsoleData;
  sites: ConnectedSites;
  senders: Senders;
  inbox: Inbox;
  orgs: Organizations;
  access: SiteAccess;
  preferences: Preferences;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
  /** The host's own sections (ConsoleSection). */
  sections?: ConsoleSections | undefined;
  recent: RecentSignIns;
  /** The person's back-channel logouts of the last week (src/notify/backchannel-logout.ts). */
  logouts?: Pick<BackchannelLogout, 'outcomesOf'> | undefined;
}

const NOTICES = new Set<ConsoleNotice>(['blocked', 'unblocked', 'access_removed', 'all_access_removed', 'saved', 'deleted', 'read', 'language']);

/**
 * The console's pages (`/console`, `/console/orgs/:orgId`) and the forms
 * behind them, for a browser without JavaScript: each form POSTs with a CSRF
 * token bound to the person, from the service's own origin, and is answered
 * with a redirect back (303) carrying a notice.
 */
export function consolePages(deps: ConsolePagesDeps): Router<PageState> {
  const { provider, data, serviceName } = deps;
  const router = new Router<PageState>({ prefix: '/console' });
  router.use(htmlErrors(serviceName, () => provider.issuer));

  router.get(CONSOLE_CALLBACK.replace('/console', ''), async (ctx) => {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    if (ctx.query.error !== undefined) {
      // The link's own words (error_description) are never shown as ours.
      const denied = ctx.query.error === 'access_denied';
      throw new PluginError('console_sign_in_failed', 'signing in to the console did not complete', denied ? 'error.callback_denied' : 'error.callback_failed');
    }
    ctx.status = 303;
    ctx.redirect(isConsoleBack(state) ? state : '/console');
  });

  const signedIn = signedInPages(deps);
  const form = (ctx: Context & { state: PageState }) => consoleForm(deps, ctx);
  const back = (ctx: Context, notice: ConsoleNotice) => backWithNotice(ctx, '/console', notice);
  const common = (ctx: { state: PageState }) => pageCommon(ctx, serviceName);

  router.get('/', signedIn, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
    const [sites, senders, inbox, logouts] = await Promise.all([
      data.sites(ctx.state.accountId),
      data.senders(ctx.state.accountId),
      data.inbox(ctx.state.accountId, cursor, ctx.state.locale),
      deps.logouts ? deps.logouts.outcomesOf(ctx.state.accountId).then((outcomes) => logoutLinesOf(provider, outcomes)) : [],
    ]);
    if (!inbox) throw new errors.InvalidRequest('this page of messages does not exist (any more)');
    const done = typeof ctx.query.done === 'string' && NOTICES.has(ctx.query.done as ConsoleNotice) ? ctx.query.done as ConsoleNotice : undefined;
    const hostNotice = typeof ctx.query.done === 'string' && !done && HOST_NOTICE.test(ctx.query.done) ? ctx.query.done : undefined;
    const extra = await hostSections(deps.sections, { accountId: ctx.state.accountId, locale: ctx.state.locale, notice: hostNotice });
    sendPage(ctx, consolePage({
      issuer: provider.issuer,
      extra,
      ...common(ctx),
      sites,
      senders,
      inbox: { ...inbox, cursor: cursor ?? null },
      adminOf: await data.memberships(ctx.state.accountId),
      notice: done,
      logouts,
    }));
  });

  async function siteOf(ctx: { state: PageState; params: Record<string, string> }) {
    const site = (await data.sites(ctx.state.accountId)).find((s) => s.clientId === ctx.params.clientId);
    if (!site) throw new PluginError('not_found', 'you never signed in to this site');
    return site;
  }

  router.get('/sites/:clientId/block', signedIn, async (ctx) => {
    sendPage(ctx, blockConfirmPage({ ...common(ctx), site: await siteOf(ctx) }));
  });

  router.post('/sites/:clientId/block', signedIn, async (ctx) => {
    await form(ctx);
    await siteOf(ctx);
    await deps.access.blockSite(ctx.state.accountId, ctx.params.clientId!);
    back(ctx, 'blocked');
  });

  router.post('/sites/:clientId/unblock', signedIn, async (ctx) => {
    await form(ctx);
    await siteOf(ctx);
    // Unblocking gives the site its way in again: a recent sign-in first, then back on the site's page.
    const page = path('/console/sites/', ctx.params.clientId!);
    const recent = await deps.recent.check(ctx, { action: 'unblock_site', back: isConsoleBack(page) ? page : '/console#sites' }, ctx.state.accountId);
    if (!recent.recent) {
      ctx.status = 303;
      ctx.redirect(recent.signInAgain);
      return;
    }
    await deps.access.unblockSite(ctx.state.accountId, ctx.params.clientId!);
    back(ctx, 'unblocked');
  });

  router.post('/senders/:clientId', signedIn, async (ctx) => {
    const fields = await form(ctx);
    const site = await siteOf(ctx);
    if (site.status !== 'connected') throw new PluginError('not_found', 'a blocked site sends nothing');
    const categories: Partial<Record<Category, Delivery>> = {};
    for (const category of CATEGORIES) {
      const value = fields[category];
      if (value === undefined) continue;
      if (!(DELIVERIES as readonly string[]).includes(value)) throw new errors.InvalidRequest(`${category}: not a choice`);
      categories[category] = value as Delivery;
    }
    // An unchecked checkbox sends nothing: absent means "not muted".
    await deps.senders.update(ctx.state.accountId, site.clientId, { muted: fields.muted === 'on', categories });
    back(ctx, 'saved');
  });

  router.post('/inbox/:id/read', signedIn, async (ctx) => {
    await form(ctx);
    await deps.inbox.markRead(ctx.state.accountId, ctx.params.id!);
    back(ctx, 'read');
  });

  router.post('/inbox/:id/delete', signedIn, async (ctx) => {
    await form(ctx);
    await deps.inbox.remove(ctx.state.accountId, ctx.params.id!);
    back(ctx, 'deleted');
  });

  router.post('/language', signedIn, async (ctx) => {
    const fields = await form(ctx);
    if (!isLocale(fields.locale)) throw new errors.InvalidRequest('locale: not a language of the service');
    await deps.preferences.setLocale(ctx.state.accountId, fields.locale);
    back(ctx, 'language');
  });

  const orgAdmin: RouterMiddleware<PageState> = async (ctx, next) => {
    const orgId = ctx.params.orgId!;
    if (!deps.orgs.isAdmin(orgId, ctx.state.accountId)) {
      // Not theirs to manage: for them there is no such page.
      throw new PluginError('not_found', 'only the organization’s administrators may see this page');
    }
    await next();
  };

  router.get('/orgs/:orgId', signedIn, async (ctx, next) => {
    // A member sees what the organization gives them; only admins see the members.
    if (deps.orgs.isAdmin(ctx.params.orgId!, ctx.state.accountId)) return next();
    const org = deps.orgs.get(ctx.params.orgId!);
    const me = (await data.memberships(ctx.state.accountId)).find((m) => m.id === ctx.params.orgId);
    // Someone else's organization, or none: nothing at this address for them.
    if (!org || !me) throw new PluginError('not_found', 'no such page');
    sendPage(ctx, orgMembershipPage({
      ...common(ctx),
      org: { id: org.id, name: org.name },
      sites: await data.orgSites(org.id),
      removedAt: me.removedAt,
    }));
    return undefined;
  }, orgAdmin, async (ctx) => {
    const org = deps.orgs.get(ctx.params.orgId!)!;
    sendPage(ctx, orgPage({
      ...common(ctx),
      org: { id: org.id, name: org.name },
      members: await data.members(org.id),
      notice: ctx.query.done === 'removed' ? 'removed' : undefined,
    }));
  });

  async function memberOf(ctx: { params: Record<string, string> }) {
    const member = (await data.members(ctx.params.orgId!)).find((m) => m.accountId === ctx.params.accountId);
    if (!member) throw new PluginError('not_found', 'no such member');
    return member;
  }

  router.get('/orgs/:orgId/members/:accountId/remove', signedIn, orgAdmin, async (ctx) => {
    const org = deps.orgs.get(ctx.params.orgId!)!;
    sendPage(ctx, removeMemberConfirmPage({ ...common(ctx), org: { id: org.id, name: org.name }, member: await memberOf(ctx) }));
  });

  router.post('/orgs/:orgId/members/:accountId/remove', signedIn, orgAdmin, async (ctx) => {
    await form(ctx);
    const result = await deps.access.removeMember(ctx.params.orgId!, ctx.params.accountId!);
    if (result === 'not_member') throw new PluginError('not_found', 'no such member');
    if (result === 'admin') throw new errors.InvalidRequest('administrators are set in the configuration and cannot be removed here');
    ctx.status = 303;
    ctx.redirect(`/console/orgs/${encodeURIComponent(ctx.params.orgId!)}?done=removed#notice`);
  });

  return router;
}
