import Router from '@koa/router';
import type Provider from 'oidc-provider';

import type { Logger } from '../host.ts';
import { withinRate, type RateLimit } from '../http/rate-limit.ts';
import type { BackchannelLogout } from '../notify/backchannel-logout.ts';
import type { Preferences } from '../preferences.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { Store } from '../store/store.ts';
import { consoleApiGuards, iso, siteJson, type ApiState } from './api.ts';
import type { ConsoleData } from './data.ts';
import { sessionViews } from './session-routes.ts';

export interface ExportDeps {
  provider: Provider;
  store: Store;
  data: ConsoleData;
  preferences: Preferences;
  sessions: Sessions;
  logger: Logger;
  /** The person's back-channel logouts of the last week (the console's "Recent sign-outs at sites"). */
  logouts?: Pick<BackchannelLogout, 'outcomesOf'> | undefined;
}

/**
 * Copies per person per hour: each reads every part of the person's data
 * (the inbox to its last page), so someone holding only a stolen session
 * cookie cannot turn it into a load on the service.
 */
export const EXPORT_RATE: RateLimit = { limit: 10, windowMs: 60 * 60_000 };

/** The format of the data copy: bumped when a member changes meaning. */
export const EXPORT_FORMAT = 'oidc-signout-notify/data-copy/1';

/**
 * "Download a copy of your data" (GDPR Art. 15 and 20; docs/console.md
 * "Your data"): GET /console/api/export, a JSON file of what the plugin keeps
 * about the signed-in person, each part exactly as the console's JSON API
 * gives it: connected sites, settings per site, the language, every inbox
 * entry (all pages), the sessions, the sign-outs at sites of the last week,
 * the organizations. Only the person's own
 * service session gets it; never cached.
 */
export function exportRoutes(deps: ExportDeps): Router<ApiState> {
  const api = new Router<ApiState>({ prefix: '/console/api' });
  api.use(...consoleApiGuards(deps));
  api.get('/export', async (ctx) => {
    const { accountId } = ctx.state;
    const { data } = deps;
    await withinRate(ctx, deps.store, `${deps.store.prefix}account:{${accountId}}:export-rate`, EXPORT_RATE, `at most ${EXPORT_RATE.limit} copies of your data an hour`);
    const [sites, senders, language, sessions, organizations, logouts] = await Promise.all([
      data.sites(accountId),
      data.senders(accountId),
      deps.preferences.locale(accountId),
      sessionViews(deps, ctx, accountId),
      data.memberships(accountId),
      deps.logouts?.outcomesOf(accountId) ?? [],
    ]);
    const inbox: unknown[] = [];
    for (let cursor: string | undefined, pages = 0; pages < 1000; pages += 1) {
      const page = await data.inbox(accountId, cursor);
      if (!page) break;
      inbox.push(...page.items.map(({ logoUri: _logo, ...item }) => ({ ...item, receivedAt: iso(item.receivedAt) })));
      if (!page.next) break;
      cursor = page.next;
    }
    ctx.set('Content-Disposition', 'attachment; filename="my-data.json"');
    ctx.body = {
      format: EXPORT_FORMAT,
      exportedAt: iso(Date.now()),
      accountId,
      language: language ?? null,
      sites: sites.map(siteJson),
      senders: senders.map(({ clientId, name, muted, categories }) => ({ clientId, name, muted, categories })),
      inbox,
      sessions: sessions.map((s) => ({ ...s, firstSeenAt: iso(s.firstSeenAt), lastSeenAt: iso(s.lastSeenAt), expiresAt: iso(s.expiresAt) })),
      logouts: logouts.map((l) => ({ ...l, at: iso(l.at) })),
      organizations: organizations.map((o) => ({ ...o, ...(o.removedAt !== undefined ? { removedAt: iso(o.removedAt) } : {}) })),
    };
  });
  return api;
}
