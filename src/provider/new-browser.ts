import { randomBytes } from 'node:crypto';

import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { providerContext } from '../http/context.ts';
import type { Logger } from '../host.ts';
import type { SecurityNotices } from '../notify/security-notices.ts';
import type { Browsers } from '../sessions/browsers.ts';
import { describeDevice } from '../sessions/device.ts';
import { routePrefixMatcher } from './paths.ts';

/** The plugin's browser cookie: a random id, to know a browser again at its next sign-in. */
export const BROWSER_COOKIE = 'osn.known';
const KEEP_MS = 400 * 24 * 60 * 60_000;

/**
 * A sign-in from a browser the account has not used tells the person (a
 * security notice, `new_browser`). Every request of the authorization
 * endpoint carries the browser cookie (set here when it has none: HttpOnly,
 * SameSite=Lax, Secure over TLS); the request that completes a sign-in (the
 * interaction's login result) asks whether the account knew that browser.
 * A failure here never fails the sign-in.
 */
export function newBrowserNotices(provider: Provider, deps: { browsers: Browsers; notices: SecurityNotices; logger: Logger }): Middleware {
  const goesThroughSignIns = routePrefixMatcher(provider, ['authorization']);
  const step: Middleware = async (ctx, next) => {
    let browserId = ctx.cookies.get(BROWSER_COOKIE);
    if (!browserId || !/^[\w-]{22}$/.test(browserId)) {
      browserId = randomBytes(16).toString('base64url');
      ctx.cookies.set(BROWSER_COOKIE, browserId, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: KEEP_MS, path: '/' });
    }
    await next();
    const { oidc } = providerContext(ctx);
    const accountId = oidc?.result?.login && oidc.session?.accountId;
    if (!accountId) return;
    try {
      if ((await deps.browsers.seen(accountId, browserId)) !== 'new') return;
      const { browser, os } = describeDevice(ctx.get('user-agent'));
      await deps.notices.give(accountId, 'new_browser', { browser: [browser, os].filter(Boolean).join(', ') || undefined, ref: browserId });
    } catch (err) {
      deps.logger.warn('new browser not checked', { reason: (err as Error).message });
    }
  };
  return (ctx, next) => (goesThroughSignIns(ctx.path) ? step(ctx, next) : next());
}
