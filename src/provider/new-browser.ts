import { randomBytes } from 'node:crypto';

import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { providerContext } from '../http/context.ts';
import type { Logger } from '../host.ts';
import type { SecurityNotices } from '../notify/security-notices.ts';
import type { Browsers } from '../sessions/browsers.ts';
import { describeDevice } from '../sessions/device.ts';
import type { RouteStep } from './route-steps.ts';

/** The plugin's browser cookie: a random id, to know a browser again at its next sign-in. */
export const BROWSER_COOKIE = 'osn.known';
const KEEP_MS = 400 * 24 * 60 * 60_000;
const BROWSER_ID = /^[\w-]{22}$/;

type Cookies = Context['cookies'] & { keys?: unknown };

/**
 * The cookies the browser's id is signed with (`osn.known.sig`): the
 * request's, whose keys are the provider's cookie keys (or, mounted, the
 * host app's); mounted in a Koa app without keys (attach() warns), the
 * provider's own.
 */
function signing(provider: Provider, ctx: Context): Cookies | undefined {
  const cookies = ctx.cookies as Cookies;
  if (cookies.keys) return cookies;
  const own = provider.createContext(ctx.req, ctx.res).cookies as Cookies & { secure?: boolean };
  // Secure as the request is (the host app's proxy setting), not as the provider alone would judge it.
  own.secure = ctx.secure;
  return own.keys ? own : undefined;
}

/**
 * The browser's id, from its cookie when the signature checks out; a
 * forged, unsigned or malformed one counts as none.
 */
export function knownBrowser(provider: Provider, ctx: Context): string | undefined {
  const id = signing(provider, ctx)?.get(BROWSER_COOKIE, { signed: true });
  return id && BROWSER_ID.test(id) ? id : undefined;
}

/**
 * A sign-in from a browser the account has not used tells the person (a
 * security notice, `new_browser`). Every request of the authorization
 * endpoint carries the browser cookie (set here when it has none, or one
 * whose signature does not check out: HttpOnly, SameSite=Lax, Secure over
 * TLS, signed with the cookie keys); the request that completes a sign-in
 * (the interaction's login result) asks whether the account knew that
 * browser. A failure here never fails the sign-in.
 */
export function newBrowserNotices(provider: Provider, deps: { browsers: Browsers; notices: SecurityNotices; logger: Logger }): RouteStep {
  const step: Middleware = async (ctx, next) => {
    let browserId = knownBrowser(provider, ctx);
    if (!browserId) {
      browserId = randomBytes(16).toString('base64url');
      // No keys anywhere: an unsigned cookie, which is never read back (oidc-provider's own cookies need keys too).
      const cookies = signing(provider, ctx);
      (cookies ?? ctx.cookies).set(BROWSER_COOKIE, browserId, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: KEEP_MS, path: '/', signed: Boolean(cookies), overwrite: true });
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
  return { where: { under: ['authorization'] }, step };
}
