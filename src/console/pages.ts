import { randomBytes } from 'node:crypto';

import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import { readForm } from '../http/body.ts';
import type { Csrf } from '../http/csrf.ts';
import { crossOrigin, PluginError } from '../http/errors.ts';
import { sameOrigin } from '../http/origin.ts';
import { htmlErrors, sendPage } from '../http/page.ts';
import { isLocale, negotiateLocale, type Locale } from '../i18n/index.ts';
import { CATEGORIES, DELIVERIES, type Category, type Delivery } from '../notify/categories.ts';
import type { Inbox } from '../notify/inbox.ts';
import type { Senders } from '../notify/senders.ts';
import type { ContactLookup } from '../options.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { SiteAccess } from '../sites/access.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { blockConfirmPage, consolePage, type ConsoleNotice } from '../../views/console.ts';
import { orgPage, removeMemberConfirmPage } from '../../views/console-org.ts';
import { CONSOLE_CALLBACK, CONSOLE_CLIENT_ID } from './console-client.ts';
import type { ConsoleData } from './data.ts';
import type { Preferences } from './preferences.ts';
import { signedInAccount } from './session.ts';

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
}

interface PageState {
  accountId: string;
  locale: Locale;
  email?: string | undefined;
  csrf: string;
}

const NOTICES = new Set<ConsoleNotice>(['blocked', 'unblocked', 'saved', 'deleted', 'read', 'language']);

/**
 * The console's pages (`/console`, `/console/orgs/:orgId`) and the forms
 * behind them, for a browser without JavaScript: each form POSTs with a CSRF
 * token bound to the person, from the service's own origin, and is answered
 * with a redirect back (303) carrying a notice.
 */
export function consolePages(deps: ConsolePagesDeps): Router<PageState> {
  const { provider, data, csrf, serviceName } = deps;
  const router = new Router<PageState>({ prefix: '/console' });
  router.use(htmlErrors(serviceName));

  /** Not signed in: off to sign in (the console's own client) and back here afterwards. */
  function signInFirst(ctx: Context): void {
    const back = ctx.method === 'GET' && /^\/console(\/[\w%.-]*)*$/.test(ctx.path) ? ctx.path : '/console';
    const url = new URL(provider.urlFor('authorization'));
    url.search = new URLSearchParams({
      client_id: CONSOLE_CLIENT_ID,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: `${provider.issuer.replace(/\/$/, '')}${CONSOLE_CALLBACK}`,
      // The code is never redeemed (the console reads the service session), but PKCE is required.
      code_challenge: randomBytes(32).toString('base64url'),
      code_challenge_method: 'S256',
      state: back,
    }).toString();
    ctx.status = 303;
    ctx.redirect(url.href);
  }

  router.get(CONSOLE_CALLBACK.replace('/console', ''), async (ctx) => {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    if (typeof ctx.query.error === 'string') {
      throw new errors.AccessDenied(typeof ctx.query.error_description === 'string' ? ctx.query.error_description : ctx.query.error);
    }
    ctx.status = 303;
    ctx.redirect(/^\/console(\/[\w%.-]*)*$/.test(state) && !state.startsWith(CONSOLE_CALLBACK) ? state : '/console');
  });

  const signedIn: Middleware<PageState> = async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    const accountId = await signedInAccount(provider, ctx as unknown as Context);
    if (!accountId) {
      if (ctx.method !== 'GET') throw new errors.SessionNotFound('not signed in');
      signInFirst(ctx as unknown as Context);
      return;
    }
    const contact = await deps.contacts(accountId);
    ctx.state.accountId = accountId;
    ctx.state.email = contact?.email;
    ctx.state.locale = negotiateLocale({ preferred: contact?.locale, acceptLanguage: ctx.get('accept-language') });
    ctx.state.csrf = csrf.token('console', accountId);
    await next();
  };

  /** A form of the console: same origin, the person's CSRF token, its fields. */
  async function form(ctx: Context & { state: PageState }): Promise<Record<string, string>> {
    if (!sameOrigin(ctx, provider.issuer)) throw crossOrigin();
    const fields = await readForm(ctx);
    csrf.verify('console', ctx.state.accountId, fields.csrf);
    return fields;
  }

  function back(ctx: Context, notice: ConsoleNotice, anchor: string, path = '/console'): void {
    ctx.status = 303;
    ctx.redirect(`${path}?done=${notice}#${anchor}`);
  }

  const common = (ctx: { state: PageState }) => ({ locale: ctx.state.locale, serviceName, csrf: ctx.state.csrf, accountEmail: ctx.state.email });

  router.get('/', signedIn, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
    const [sites, senders, inbox] = await Promise.all([
      data.sites(ctx.state.accountId),
      data.senders(ctx.state.accountId),
      data.inbox(ctx.state.accountId, cursor),
    ]);
    if (!inbox) throw new errors.InvalidRequest('this page of messages does not exist (any more)');
    const done = typeof ctx.query.done === 'string' && NOTICES.has(ctx.query.done as ConsoleNotice) ? ctx.query.done as ConsoleNotice : undefined;
    sendPage(ctx, consolePage({
      ...common(ctx),
      sites,
      senders,
      inbox: { ...inbox, cursor: cursor ?? null },
      adminOf: adminOf(ctx.state.accountId),
      notice: done,
    }));
  });

  function adminOf(accountId: string): { id: string; name: string }[] {
    return deps.orgs.list().filter((org) => org.admins.includes(accountId)).map(({ id, name }) => ({ id, name }));
  }

  async function siteOf(ctx: { state: PageState; params: Record<string, string> }) {
    const site = (await data.sites(ctx.state.accountId)).find((s) => s.clientId === ctx.params.clientId);
    if (!site) throw new PluginError(404, 'not_found', 'you never signed in to this site');
    return site;
  }

  router.get('/sites/:clientId/block', signedIn, async (ctx) => {
    sendPage(ctx, blockConfirmPage({ ...common(ctx), site: await siteOf(ctx) }));
  });

  router.post('/sites/:clientId/block', signedIn, async (ctx) => {
    await form(ctx as never);
    await siteOf(ctx);
    await deps.access.blockSite(ctx.state.accountId, ctx.params.clientId!);
    back(ctx as never, 'blocked', 'sites');
  });

  router.post('/sites/:clientId/unblock', signedIn, async (ctx) => {
    await form(ctx as never);
    await siteOf(ctx);
    await deps.access.unblockSite(ctx.state.accountId, ctx.params.clientId!);
    back(ctx as never, 'unblocked', 'sites');
  });

  router.post('/senders/:clientId', signedIn, async (ctx) => {
    const fields = await form(ctx as never);
    const site = await siteOf(ctx);
    if (site.status !== 'connected') throw new PluginError(404, 'not_found', 'a blocked site sends nothing');
    const categories: Partial<Record<Category, Delivery>> = {};
    for (const category of CATEGORIES) {
      const value = fields[category];
      if (value === undefined) continue;
      if (!(DELIVERIES as readonly string[]).includes(value)) throw new errors.InvalidRequest(`${category}: not a choice`);
      categories[category] = value as Delivery;
    }
    // An unchecked checkbox sends nothing: absent means "not muted".
    await deps.senders.update(ctx.state.accountId, site.clientId, { muted: fields.muted === 'on', categories });
    back(ctx as never, 'saved', 'senders');
  });

  router.post('/inbox/:id/read', signedIn, async (ctx) => {
    await form(ctx as never);
    await deps.inbox.markRead(ctx.state.accountId, ctx.params.id!);
    back(ctx as never, 'read', 'inbox');
  });

  router.post('/inbox/:id/delete', signedIn, async (ctx) => {
    await form(ctx as never);
    await deps.inbox.remove(ctx.state.accountId, ctx.params.id!);
    back(ctx as never, 'deleted', 'inbox');
  });

  router.post('/language', signedIn, async (ctx) => {
    const fields = await form(ctx as never);
    if (!isLocale(fields.locale)) throw new errors.InvalidRequest('locale: not a language of the service');
    await deps.preferences.setLocale(ctx.state.accountId, fields.locale);
    back(ctx as never, 'language', 'language');
  });

  const orgAdmin: Middleware<PageState> = async (ctx, next) => {
    const orgId = (ctx as unknown as { params: { orgId: string } }).params.orgId;
    if (!deps.orgs.isAdmin(orgId, ctx.state.accountId)) {
      throw new PluginError(403, 'access_denied', 'only the organization’s administrators may see this page');
    }
    await next();
  };

  router.get('/orgs/:orgId', signedIn, orgAdmin, async (ctx) => {
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
    if (!member) throw new PluginError(404, 'not_found', 'no such member');
    return member;
  }

  router.get('/orgs/:orgId/members/:accountId/remove', signedIn, orgAdmin, async (ctx) => {
    const org = deps.orgs.get(ctx.params.orgId!)!;
    sendPage(ctx, removeMemberConfirmPage({ ...common(ctx), org: { id: org.id, name: org.name }, member: await memberOf(ctx) }));
  });

  router.post('/orgs/:orgId/members/:accountId/remove', signedIn, orgAdmin, async (ctx) => {
    await form(ctx as never);
    const result = await deps.access.removeMember(ctx.params.orgId!, ctx.params.accountId!);
    if (result === 'not_member') throw new PluginError(404, 'not_found', 'no such member');
    if (result === 'admin') throw new errors.InvalidRequest('administrators are set in the configuration and cannot be removed here');
    ctx.status = 303;
    ctx.redirect(`/console/orgs/${encodeURIComponent(ctx.params.orgId!)}?done=removed`);
  });

  return router;
}
