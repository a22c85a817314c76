import Router from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { notifyRoutes } from './api/notify.ts';
import { openApiRoutes } from './api/openapi.ts';
import { ssfRoutes } from './api/ssf/routes.ts';
import { unsubscribeRoutes } from './api/unsubscribe.ts';
import { upstreamSignalRoutes, type GtrSubject } from './api/upstream-signals.ts';
import { consoleData } from './console/data.ts';
import { consoleRoutes } from './console/routes.ts';
import { NOTIFIED_EVENT } from './events.ts';
import type { NotificationResult } from './notify/notification.ts';
import type { Parts } from './parts.ts';
import type { RouteStep } from './provider/route-steps.ts';

/** One route of the plugin's own, as its router registered it. */
export interface OwnRoute {
  methods: string[];
  path: string;
}

/** Every route the routers registered (their `use` steps left out), with the prefixes they are mounted under. */
export function routeTable(router: Router): OwnRoute[] {
  return router.stack.flatMap((layer) => (layer.methods.length > 0 && typeof layer.path === 'string'
    ? [{ methods: layer.methods.filter((m) => m !== 'HEAD'), path: layer.path }]
    : []));
}

/**
 * Whether a request path may reach one of the table's routes, matched as
 * @koa/router matches (any case, a trailing slash): the static start of
 * each route's path, the shortest that covers the others. The provider's
 * requests skip the routers' matching on it.
 */
export function ownPathMatcher(table: OwnRoute[]): (path: string) => boolean {
  const starts = [...new Set(table.map(({ path }) => path.split(/[:(*]/, 1)[0]!.replace(/\/+$/, '') || '/'))].sort();
  const roots = starts.filter((start, i) => !starts.slice(0, i).some((shorter) => start === shorter || start.startsWith(`${shorter}/`)));
  const escaped = roots.map((root) => root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const own = new RegExp(`^(?:${escaped.join('|')})(?:/|$)`, 'i');
  return (path) => own.test(path);
}

/**
 * Global Token Revocation's subject to an account: an upstream's `iss_sub`
 * (its linked account; sign-in through it is then held), an address here
 * (`upstreamSignals.accountByEmail`), or an `opaque` account id the host
 * knows (its contacts lookup answers for it).
 */
function globalRevocationTarget(parts: Parts) {
  const { options } = parts;
  return async (subject: GtrSubject) => {
    if ('iss' in subject) {
      const upstream = options.upstreamSignals.upstreams.find((u) => u.issuer === subject.iss);
      const found = upstream && await options.upstreamSignals.account?.(upstream.id, subject);
      return found ? { upstream: { id: upstream.id, name: upstream.name }, found } : undefined;
    }
    const accountId = 'email' in subject ? await options.upstreamSignals.accountByEmail?.(subject.email) : subject.id;
    if (!accountId || !(await options.contacts(accountId))) return undefined;
    return { found: { accountId, sub: accountId } };
  };
}

/**
 * The plugin's own routes on a provider: the person's console, POST
 * /api/notify, its OpenAPI document, the Shared Signals transmitter and the
 * letters' unsubscribe links, in
 * one router; its table
 * (docs/routes.md lists it) and its step, for the paths the table's routes
 * start with.
 */
export function ownRoutes(provider: Provider, parts: Parts): { table: OwnRoute[]; step: RouteStep } {
  const { options, sites, senders, inbox, organizations: orgs, access, csrf, preferences, contacts, logger, sessions, store, letters, tokens } = parts;
  const data = consoleData({ provider, sites, senders, inbox, orgs, contacts, serviceName: options.serviceName, signInCheck: parts.signInCheck });
  const router = new Router();
  router.use(
    consoleRoutes({
      provider, store, data, sites, senders, inbox, orgs, access, csrf, preferences,
      contacts, serviceName: options.serviceName, logger, sections: options.console.sections, sessions, recent: parts.recentSignIn,
      logouts: parts.logouts,
    }).routes(),
    notifyRoutes({
      provider, store, sites, orgs, senders, contacts: options.contacts, queue: letters, logger, limits: options.notify,
      // Notify outcomes for the host's metrics, as the site got them.
      notified: (clientId: string, result: NotificationResult) => parts.emit(NOTIFIED_EVENT, { clientId, result }),
    }).routes(),
    openApiRoutes(logger).routes(),
    ssfRoutes({ provider, store: parts.store, streams: parts.streams, transmitter: parts.transmitter, logger, allowPrivateFetchHosts: options.allowPrivateFetchHosts }).routes(),
    unsubscribeRoutes({ provider, senders, tokens, contacts, serviceName: options.serviceName }).routes(),
    upstreamSignalRoutes({
      provider, receiver: parts.upstreamSignals, logger, maxBodyBytes: options.upstreamSignals.maxBodyBytes,
      globalTokenRevocation: { ...options.upstreamSignals.globalTokenRevocation, find: globalRevocationTarget(parts) },
    }).routes(),
  );
  const table = routeTable(router);
  return { table, step: { where: { test: ownPathMatcher(table) }, step: router.routes() as Middleware } };
}
