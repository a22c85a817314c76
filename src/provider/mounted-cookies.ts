import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import type { Logger } from '../host.ts';

const first = (keys: unknown): unknown => (Array.isArray(keys) ? keys[0] : undefined);

/**
 * Mounted in a Koa app of the host's (koa-mount), oidc-provider sets its
 * cookies through that app's `ctx.cookies`. Without `app.keys` there they go
 * out unsigned, and with other keys than the provider's they are signed with
 * those; either way `provider.interactionDetails()`, which reads the
 * interaction cookie with the provider's own keys, finds none
 * (`SessionNotFound`), and the browser sees a bare `400 invalid_request`.
 * Start-up cannot see the mount; the first request through it can: one
 * warning per app, naming the fix.
 */
export function warnOfUnsignedMount(provider: Provider, logger: Logger): Middleware {
  const checked = new WeakSet<object>();
  return (ctx, next) => {
    const { app } = ctx;
    if (app !== (provider as unknown) && !checked.has(app)) {
      checked.add(app);
      const keys = app.keys as unknown;
      if (!keys || (Array.isArray(keys) && keys.length === 0)) {
        logger.warn('oidc-signout-notify: THE PROVIDER IS MOUNTED IN A KOA APP WITHOUT app.keys: mounted (koa-mount), oidc-provider sets its interaction and session cookies through that app, so they go out unsigned and provider.interactionDetails() finds no interaction (SessionNotFound: the browser gets 400 invalid_request). Set app.keys = cookies.keys (the keys of the provider\'s configuration) on the Koa app that mounts it, or let the provider serve itself (provider.listen(), provider.callback()).');
      } else if (first(keys) !== undefined && first(provider.keys) !== undefined && first(keys) !== first(provider.keys)) {
        logger.warn('oidc-signout-notify: THE PROVIDER IS MOUNTED IN A KOA APP WHOSE app.keys ARE NOT THE PROVIDER\'S cookies.keys: oidc-provider signs its cookies with the app\'s keys and reads the interaction cookie with its own, so provider.interactionDetails() finds no interaction (SessionNotFound: the browser gets 400 invalid_request). Set app.keys = cookies.keys on the Koa app that mounts it.');
      }
    }
    return next();
  };
}
