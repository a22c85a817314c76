import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { RouteStep } from './route-steps.ts';
import { subjectFor } from './subject.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { providerContext } from '../http/context.ts';

/**
 * Writes every completed sign-in at a site into Connected sites, with the
 * `sub` the site received (so /api/notify can find the person) and the
 * session's sid (so Block site can send back-channel logout). oidc-provider
 * announces success with an event it does not wait for; this step waits for
 * the write before the browser is sent back to the site, so the site never
 * holds a `sub` the service does not know yet.
 */
export function recordSignIns(provider: Provider, sites: ConnectedSites, sessionTtlFallback: number, signedIn?: (ctx: KoaContextWithOIDC, accountId: string) => Promise<void>): RouteStep {
  const succeeded = new WeakSet<object>();
  provider.on('authorization.success', (ctx: KoaContextWithOIDC) => succeeded.add(ctx));

  const step: Middleware = async (ctx, next) => {
    await next();
    if (!succeeded.has(ctx)) return;
    const { session, client, grant } = providerContext(ctx).oidc;
    const accountId = session?.accountId;
    // The console is the service itself, not a site the person connected.
    if (!accountId || !client || client.clientId === CONSOLE_CLIENT_ID) return;
    const now = Date.now();
    await sites.recordSignIn({
      accountId,
      clientId: client.clientId,
      sub: await subjectFor(provider, providerContext(ctx), accountId, client),
      scopes: (grant?.getOIDCScope() ?? '').split(' ').filter(Boolean),
      sid: session.sidFor(client.clientId),
      sessionUid: session.uid,
      sessionExpiresAt: typeof session.exp === 'number' ? session.exp * 1000 : now + sessionTtlFallback * 1000,
      at: now,
    });
    await signedIn?.(providerContext(ctx), accountId);
  };
  // Sign-ins complete at the authorization endpoint (and its resume) or at the
  // device flow's verification pages; other requests pass untouched.
  return { where: { under: ['authorization', 'code_verification'] }, step };
}
