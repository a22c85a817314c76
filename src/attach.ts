import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { UNAVAILABLE_EVENT } from './events.ts';
import { notFoundPages } from './http/error-page.ts';
import { unavailableAs503 } from './http/unavailable.ts';
import { negotiateLocale } from './i18n/index.ts';
import type { Parts } from './parts.ts';
import { endSessionLogouts } from './provider/backchannel.ts';
import { clientCredentialsByLength } from './provider/client-credentials.ts';
import { codeFlowDiscovery } from './provider/code-flow-discovery.ts';
import { allowedResponseModes } from './provider/configure.ts';
import { endSessionConfirmPostStep, endSessionPreStep } from './provider/end-session.ts';
import { missingClientAuthIsInvalidClient } from './provider/missing-client-auth.ts';
import { warnOfUnsignedMount } from './provider/mounted-cookies.ts';
import { newBrowserNotices } from './provider/new-browser.ts';
import { recordSessions } from './provider/record-session.ts';
import { recordSignIns } from './provider/record-sign-in.ts';
import { routeSteps } from './provider/route-steps.ts';
import { warnOfInsecureCookies } from './provider/secure-cookies.ts';
import { batchTokenWrites } from './provider/token-batch.ts';
import { ownRoutes } from './routes.ts';
import { sessionEndSignals } from './provider/ssf-signals.ts';
import { watchReuse } from './theft/watch-reuse.ts';

/** oidc-provider's JSON endpoints, the hot paths: the steps for pages pass them by. */
const JSON_ENDPOINTS = ['token', 'introspection', 'revocation', 'userinfo', 'jwks', 'pushed_authorization_request'];

/**
 * What attach() mounts on a provider built from configure(), in this order
 * (each a step of its own file): the 503 for an unavailable store outermost,
 * then the provider's routes' own steps, then the plugin's routes, these as
 * one step that runs, per request, only those for its path (./provider/route-steps.ts).
 */
export function attachTo(provider: Provider, parts: Parts, configured: Configuration | undefined): void {
  const { options, adapter, sites, sessions, preferences, logger, theft, emit } = parts;
  warnOfInsecureCookies(provider, logger);
  clientCredentialsByLength(provider);
  // Outermost of all steps, routes the host mounted before attach() included
  // (Koa composes provider.middleware when the server starts).
  const outermost = unavailableAs503(options.serviceName, (event) => emit(UNAVAILABLE_EVENT, event));
  provider.middleware.unshift(outermost as (typeof provider.middleware)[number]);
  provider.use(routeSteps(provider, [
    // Neither runs on oidc-provider's JSON endpoints (the hot paths): they set no cookie and answer their own misses.
    { where: { except: JSON_ENDPOINTS }, step: warnOfUnsignedMount(provider, logger) },
    { where: { except: JSON_ENDPOINTS }, step: notFoundPages(options.serviceName, () => provider.issuer) },
    batchTokenWrites(adapter, theft.pending),
    missingClientAuthIsInvalidClient(),
    codeFlowDiscovery(allowedResponseModes(configured ?? {})),
    endSessionPreStep(provider, options.serviceName),
    endSessionConfirmPostStep(provider),
    endSessionLogouts(provider),
    recordSignIns(provider, sites, options.defaultTtl, async (ctx, accountId) => {
      // The language the person signed in with becomes theirs where the host knows none.
      if ((await options.contacts(accountId))?.locale) return;
      const uiLocales = ctx.oidc.params?.ui_locales;
      await preferences.setFirstLocale(accountId, negotiateLocale({ uiLocales: typeof uiLocales === 'string' ? uiLocales : undefined, acceptLanguage: ctx.get('accept-language') }));
    }),
    recordSessions(sessions, logger),
    newBrowserNotices(provider, { browsers: parts.browsers, notices: parts.notices, logger }),
    ownRoutes(provider, parts).step,
  ]));
  watchReuse(provider, theft.report, (ctx) => adapter.consumedSource(ctx));
  sessionEndSignals(provider, parts.tell, logger, parts.sessionExpiry);
}
