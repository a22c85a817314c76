import Router from '@koa/router';

import { consoleApi, type ConsoleApiDeps } from './api.ts';
import { blockedSiteRoutes, type BlockedSiteDeps } from './blocked-site.ts';
import { exportRoutes, type ExportDeps } from './export.ts';
import { consolePages, type ConsolePagesDeps } from './pages.ts';
import { sessionRoutes, type SessionRoutesDeps } from './session-routes.ts';
import { signInAgainRoutes, type SignInAgainDeps } from './sign-in-again.ts';
import { siteRoutes, type SiteRoutesDeps } from './site-routes.ts';

export type ConsoleDeps = ConsoleApiDeps & BlockedSiteDeps & ConsolePagesDeps & SiteRoutesDeps & SessionRoutesDeps & SignInAgainDeps & ExportDeps;

/**
 * The plugin's own routes under /console: the blocked-site page of a sign-in,
 * the person's console: its pages and its JSON API, and the page before a
 * fresh sign-in.
 */
export function consoleRoutes(deps: ConsoleDeps): Router {
  const router = new Router();
  const blocked = blockedSiteRoutes(deps);
  const api = consoleApi(deps);
  router.use(blocked.routes(), blocked.allowedMethods());
  router.use(api.routes(), api.allowedMethods());
  const copy = exportRoutes(deps);
  router.use(copy.routes(), copy.allowedMethods());
  for (const own of [...siteRoutes(deps), ...sessionRoutes(deps), signInAgainRoutes(deps)]) router.use(own.routes(), own.allowedMethods());
  const pages = consolePages(deps);
  router.use(pages.routes(), pages.allowedMethods());
  return router;
}
