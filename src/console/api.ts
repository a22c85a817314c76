import Router, { type RouterMiddleware } from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import { readJson } from '../http/body.ts';
import { validate } from '../http/validate.ts';
import { crossOrigin, jsonErrors, loginRequired, PluginError, recentSignInRequired } from '../http/errors.ts';
import { sameOrigin } from '../http/origin.ts';
import { CATEGORIES, DELIVERIES } from '../notify/categories.ts';
import type { Inbox } from '../notify/inbox.ts';
import type { Senders } from '../notify/senders.ts';
import type { Logger } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { SiteAccess } from '../sites/access.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import type { ConsoleData, SiteView } from './data.ts';
import type { RecentSignIns } from './recent-sign-in.ts';
import { signedInAccount } from './session.ts';

export interface ConsoleApiDeps {
  provider: Provider;
  data: ConsoleData;
  sites: ConnectedSites;
  senders: Senders;
  inbox: Inbox;
  orgs: Organizations;
  access: SiteAccess;
  logger: Logger;
  recent: RecentSignIns;
}

export interface ApiState {
  accountId: string;
}

/**
 * The guards of every console API route: errors as JSON, personal data never
 * cached, framed or run, changes only from the service's own pages, and the
 * person of the service session (else 401 login_required).
 */
export function consoleApiGuards(deps: { provider: Provider; logger: Logger }): Middleware<ApiState>[] {
  return [jsonErrors(deps.logger), async (ctx, next) => {
    ctx.set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'", 'X-Content-Type-Options': 'nosniff' });
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !sameOrigin(ctx, deps.provider.issuer)) throw crossOrigin();
    const accountId = await signedInAccount(deps.provider, ctx);
    if (!accountId) throw loginRequired();
    ctx.state.accountId = accountId;
    await next();
  }];
}

export const notFound = (what: string) => new PluginError('not_found', what);
export const iso = (ms: number) => new Date(ms).toISOString();

/** A connected site as the JSON API gives it: its times as ISO strings, `lastUsedAt` null until first use. */
export function siteJson<T extends SiteView>(site: T) {
  return {
    ...site,
    firstSignInAt: iso(site.firstSignInAt),
    lastSignInAt: iso(site.lastSignInAt),
    lastUsedAt: site.lastUsedAt === undefined ? null : iso(site.lastUsedAt),
    ...(site.blockedAt !== undefined ? { blockedAt: iso(site.blockedAt) } : {}),
    ...(site.accessRemovedAt !== undefined ? { accessRemovedAt: iso(site.accessRemovedAt) } : {}),
    ...(site.endedByServiceAt !== undefined ? { endedByServiceAt: iso(site.endedByServiceAt) } : {}),
  };
}

/** PUT /console/api/senders/:clientId: any of `muted` and `categories`, nothing else. */
const senderChange = z.object({
  muted: z.boolean().optional(),
  categories: z.object(Object.fromEntries(CATEGORIES.map((c) => [c, z.enum(DELIVERIES).optional()]))).strict().optional(),
}).strict();


/**
 * The console's JSON API for the signed-in person (docs/console.md "Console". The
 * page's forms do the same through its own routes; scripts use this.
 */
export function consoleApi(deps: ConsoleApiDeps): Router<ApiState> {
  const { data, access, orgs } = deps;
  const api = new Router<ApiState>({ prefix: '/console/api' });
  api.use(...consoleApiGuards(deps));

  api.get('/sites', async (ctx) => {
    ctx.body = (await data.sites(ctx.state.accountId)).map(siteJson);
  });

  api.post('/sites/:clientId/block', async (ctx) => {
    if (await access.blockSite(ctx.state.accountId, ctx.params.clientId!) === 'not_connected') throw notFound('you never signed in to this site');
    ctx.status = 204;
  });

  api.post('/sites/:clientId/unblock', async (ctx) => {
    const recent = await deps.recent.check(ctx, { action: 'unblock_site', back: '/console#sites' }, ctx.state.accountId);
    if (!recent.recent) throw recentSignInRequired(recent.signInAgain);
    if (await access.unblockSite(ctx.state.accountId, ctx.params.clientId!) === 'not_connected') throw notFound('you never signed in to this site');
    ctx.status = 204;
  });

  api.get('/senders', async (ctx) => {
    ctx.body = (await data.senders(ctx.state.accountId)).map(({ clientId, name, muted, categories }) => ({ clientId, name, muted, categories }));
  });

  api.put('/senders/:clientId', async (ctx) => {
    const change = validate(senderChange, await readJson(ctx, 4096));
    const site = await deps.sites.get(ctx.state.accountId, ctx.params.clientId!);
    if (site?.status !== 'connected' || !(await orgs.mayUse(ctx.state.accountId, site.clientId))) throw notFound('no such sender: a site you signed in to and did not block');
    const settings = await deps.senders.update(ctx.state.accountId, ctx.params.clientId!, change);
    ctx.body = { clientId: ctx.params.clientId, ...settings };
  });

  api.get('/inbox', async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
    const page = await data.inbox(ctx.state.accountId, cursor);
    if (!page) throw new errors.InvalidRequest('cursor: not a cursor from this inbox');
    ctx.body = { ...page, items: page.items.map(({ logoUri: _logo, ...item }) => ({ ...item, receivedAt: iso(item.receivedAt) })) };
  });

  api.post('/inbox/:id/read', async (ctx) => {
    if (!(await deps.inbox.markRead(ctx.state.accountId, ctx.params.id!))) throw notFound('no such message');
    ctx.status = 204;
  });

  api.delete('/inbox/:id', async (ctx) => {
    if (!(await deps.inbox.remove(ctx.state.accountId, ctx.params.id!))) throw notFound('no such message');
    ctx.status = 204;
  });

  const orgAdmin: RouterMiddleware<ApiState> = async (ctx, next) => {
    // An unknown organization and someone else's look the same: 403.
    if (!orgs.isAdmin(ctx.params.orgId!, ctx.state.accountId)) {
      throw new PluginError('not_admin', 'only the organization’s administrators may do this');
    }
    await next();
  };

  api.get('/orgs/:orgId/members', orgAdmin, async (ctx) => {
    ctx.body = (await data.members(ctx.params.orgId!)).map((m) => ({
      ...m,
      ...(m.removedAt !== undefined ? { removedAt: iso(m.removedAt) } : {}),
    }));
  });

  api.delete('/orgs/:orgId/members/:accountId', orgAdmin, async (ctx) => {
    const result = await access.removeMember(ctx.params.orgId!, ctx.params.accountId!);
    if (result === 'not_member') throw notFound('no such member');
    if (result === 'admin') throw new PluginError('invalid_request', 'administrators are set in the configuration and cannot be removed here');
    ctx.status = 204;
  });

  return api;
}
