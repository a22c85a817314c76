import type { Middleware } from 'koa';

import type { Logger } from '../host.ts';
import { writeThrottle } from '../write-throttle.ts';
import type { RouteStep } from './route-steps.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { providerContext } from '../http/context.ts';

/** At most one write per session per minute and process. */
const EVERY_MS = 60_000;

/**
 * Records the person's service session whenever a request of the
 * authorization endpoint (a sign-in at a site or at the console, its resume,
 * a silent `prompt=none`) or of the device flow went through it signed in:
 * the console's list of where the person is signed in, with the browser's
 * User-Agent and when it was last active. After oidc-provider saved the
 * session, so its expiry is known. A sign-in just finished (the resume of
 * an interaction with a `login` result) is recorded at once, with the
 * upstream its result names (`login.upstream`, the host's: the session
 * signed in through it; docs/upstream-signals.md).
 */
export function recordSessions(sessions: Sessions, logger: Logger): RouteStep {
  const throttle = writeThrottle(EVERY_MS);

  const step: Middleware = async (ctx, next) => {
    await next();
    const session = providerContext(ctx).oidc?.entities?.Session as { uid: string; accountId?: string; exp?: number; destroyed?: boolean } | undefined;
    if (!session?.accountId || session.destroyed || typeof session.exp !== 'number') return;
    const key = `${session.accountId}\u0000${session.uid}`;
    const now = Date.now();
    const login = (providerContext(ctx).oidc as { result?: { login?: { accountId?: unknown; upstream?: unknown } } } | undefined)?.result?.login;
    const signedIn = login?.accountId === session.accountId;
    if (!throttle.due(key, now) && !signedIn) return;
    try {
      const upstream = signedIn ? (typeof login.upstream === 'string' && login.upstream ? login.upstream : null) : undefined;
      await sessions.seen(session.accountId, session.uid, session.exp * 1000, ctx.get('user-agent'), now, upstream);
    } catch (err) {
      // The sign-in itself succeeded; the list catches up at the next one.
      throttle.forget(key);
      logger.warn('session not recorded', { reason: (err as Error).message });
    }
  };
  return { where: { under: ['authorization', 'code_verification'] }, step };
}
