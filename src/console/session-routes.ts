import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';

import type { Csrf } from '../http/csrf.ts';
import { htmlErrors } from '../http/error-page.ts';
import { sendPage } from '../http/page.ts';
import type { ContactLookup, Logger } from '../host.ts';
import { knownBrowser } from '../provider/new-browser.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { endSessionsConfirmPage, sessionsPage, type SessionView } from '../../views/console/sessions.ts';
import { consoleApiGuards, iso, notFound, type ApiState } from './api.ts';
import { backWithNotice, consoleForm, pageCommon, signedInPages, type PageState } from './page-context.ts';

export interface SessionRoutesDeps {
  provider: Provider;
  sessions: Sessions;
  contacts: ContactLookup;
  csrf: Csrf;
  serviceName: string;
  logger: Logger;
}

/** The person's sessions as the page, the API and the data copy show them (the one of this request marked `current`). */
export async function sessionViews(deps: { provider: Provider; sessions: Sessions }, ctx: Context, accountId: string): Promise<SessionView[]> {
  const [list, current] = await Promise.all([deps.sessions.list(accountId), deps.provider.Session.get(ctx).then((s) => s.uid)]);
  const ids = [...new Set(list.flatMap((s) => s.clientIds))];
  const clients = await Promise.all(ids.map((id) => deps.provider.Client.find(id).catch(() => undefined)));
  const named = new Map(ids.map((id, i) => [id, clients[i]?.clientName ?? id]));
  return list.map(({ clientIds, ...s }) => ({ ...s, current: s.id === current, sites: clientIds.map((clientId) => ({ clientId, name: named.get(clientId)! })) }));
}

/**
 * Where the person is signed in (docs/console.md "Sessions and devices":
 * `/console/sessions` with "Sign out of this device", "Sign out everywhere
 * else" and "Sign out everywhere", and the same through the JSON API.
 */
export function sessionRoutes(deps: SessionRoutesDeps): Router[] {
  const { provider, sessions } = deps;

  const currentUid = async (ctx: Context) => (await provider.Session.get(ctx)).uid;
  const views = (ctx: Context, accountId: string) => sessionViews(deps, ctx, accountId);

  /**
   * Ends every session of the person but this one (or this one too), however
   * many there are; returns how many of the listed ones ended.
   */
  async function endMany(ctx: Context, accountId: string, includingThis: boolean): Promise<number> {
    return sessions.endAll(accountId, includingThis ? undefined : await currentUid(ctx), { userAgent: ctx.get('user-agent'), browserId: knownBrowser(provider, ctx) });
  }

  /* ---------- Pages ---------- */

  const pages = new Router<PageState>({ prefix: '/console/sessions' });
  pages.use(htmlErrors(deps.serviceName, () => provider.issuer));
  const signedIn = signedInPages(deps);
  const common = (ctx: { state: PageState }) => pageCommon(ctx, deps.serviceName);

  pages.get('/', signedIn, async (ctx) => {
    const done = ctx.query.done === 'signed_out' || ctx.query.done === 'signed_out_others' ? ctx.query.done : undefined;
    sendPage(ctx, sessionsPage({ ...common(ctx), sessions: await views(ctx, ctx.state.accountId), notice: done }));
  });

  for (const which of ['others', 'all'] as const) {
    pages.get(`/end-${which}`, signedIn, async (ctx) => {
      sendPage(ctx, endSessionsConfirmPage({ ...common(ctx), which, sessions: await views(ctx, ctx.state.accountId) }));
    });
  }

  pages.post('/end-others', signedIn, async (ctx) => {
    await consoleForm(deps, ctx);
    await endMany(ctx, ctx.state.accountId, false);
    backWithNotice(ctx, '/console/sessions', 'signed_out_others');
  });

  pages.post('/end-all', signedIn, async (ctx) => {
    await consoleForm(deps, ctx);
    await endMany(ctx, ctx.state.accountId, true);
    // Signed out here too: the service's own signed-out page.
    ctx.status = 303;
    ctx.redirect(provider.urlFor('end_session_success'));
  });

  pages.post('/:id/end', signedIn, async (ctx) => {
    await consoleForm(deps, ctx);
    if (!(await sessions.end(ctx.state.accountId, ctx.params.id!))) throw notFound('no such session');
    backWithNotice(ctx, '/console/sessions', 'signed_out');
  });

  /* ---------- JSON API ---------- */

  const api = new Router<ApiState>({ prefix: '/console/api/sessions' });
  api.use(...consoleApiGuards(deps));

  api.get('/', async (ctx) => {
    ctx.body = (await views(ctx, ctx.state.accountId)).map((s) => ({
      ...s,
      firstSeenAt: iso(s.firstSeenAt),
      lastSeenAt: iso(s.lastSeenAt),
      expiresAt: iso(s.expiresAt),
    }));
  });

  api.delete('/:id', async (ctx) => {
    if (!(await sessions.end(ctx.state.accountId, ctx.params.id!))) throw notFound('no such session');
    ctx.status = 204;
  });

  api.post('/end-others', async (ctx) => {
    ctx.body = { ended: await endMany(ctx, ctx.state.accountId, false) };
  });

  api.post('/end-all', async (ctx) => {
    ctx.body = { ended: await endMany(ctx, ctx.state.accountId, true) };
  });

  return [api, pages];
}
