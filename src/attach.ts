import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { UNAVAILABLE_EVENT } from './events.ts';
import { notFoundPages } from './http/error-page.ts';
import { unavailableAs503 } from './http/unavailable.ts';
import { negotiateLocale } from './i18n/index.ts';
import type { Parts } from './parts.ts';
import { endSessionLogouts } from './provider/backchannel.ts';
import { codeFlowDiscovery } from './provider/code-flow-discovery.ts';
import { allowedResponseModes } from './provider/configure.ts';
import { endSessionConfirmPostStep, endSessionPreStep } from './provider/end-session.ts';
import { missingClientAuthIsInvalidClient } from './provider/missing-client-auth.ts';
import { warnOfUnsignedMount } from './provider/mounted-cookies.ts';
import { routeMatcher } from './provider/paths.ts';
import { newBrowserNotices } from './provider/new-browser.ts';
import { recordSessions } from './provider/record-session.ts';
import { recordSignIns } from './provider/record-sign-in.ts';
import { warnOfInsecureCookies } from './provider/secure-cookies.ts';
import { batchTokenWrites } from './provider/token-batch.ts';
import { ownRoutes } from './routes.ts';
import { sessionEndSignals } from './provider/ssf-signals.ts';
import { watchReuse } from './theft/watch-reuse.ts';

/**
 * What attach() mounts on a provider built from configure(), in this order
 * (each a step of its own file): the 503 for an unavailable store outermost,
 * then the provider's routes' own steps, then the plugin's routes.
 */
export function attachTo(provider: Provider, parts: Parts, configured: Configuration | undefined): void {
  const { options, adapter, sites, sessions, preferences, logger, theft, emit } = parts;
  warnOfInsecureCookies(provider, logger);
  // Outermost of all steps, routes the host mounted before attach() included
  // (Koa composes provider.middleware when the server starts).
  const outermost = unavailableAs503(options.serviceName, (event) => emit(UNAVAILABLE_EVENT, event));
  provider.middleware.unshift(outermost as (typeof provider.middleware)[number]);
  provider.use(warnOfUnsignedMount(provider, logger));
  provider.use(notFoundPages(options.serviceName, () => provider.issuer,
    routeMatcher(provider, ['token', 'introspection', 'revocation', 'userinfo', 'jwks', 'pushed_authorization_request'])));
  provider.use(batchTokenWrites(provider, adapter, theft.pending));
  provider.use(missingClientAuthIsInvalidClient(provider));
  provider.use(codeFlowDiscovery(allowedResponseModes(configured ?? {})));
  provider.use(endSessionPreStep(provider, options.serviceName));
  provider.use(endSessionConfirmPostStep(provider));
  provider.use(endSessionLogouts(provider));
  provider.use(recordSignIns(provider, sites, options.defaultTtl, async (ctx, accountId) => {
    // The language the person signed in with becomes theirs where the host knows none.
    if ((await options.contacts(accountId))?.locale) return;
    const uiLocales = ctx.oidc.params?.ui_locales;
    await preferences.setFirstLocale(accountId, negotiateLocale({ uiLocales: typeof uiLocales === 'string' ? uiLocales : undefined, acceptLanguage: ctx.get('accept-language') }));
  }));
  provider.use(recordSessions(provider, sessions, logger));
  provider.use(newBrowserNotices(provider, { browsers: parts.browsers, notices: parts.notices, logger }));
  provider.use(ownRoutes(provider, parts).middleware);
  watchReuse(provider, theft.report, (ctx) => adapter.consumedSource(ctx));
  sessionEndSignals(provider, parts.tell, logger, parts.sessionExpiry);
}
