import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import type { ReplayEvent } from '../../adapters/store-adapter.ts';
import type { Logger } from '../options.ts';

/** Event the plugin emits on the provider when a used refresh token or code comes back. */
export const REPLAY_EVENT = 'signout_notify.replay_detected';

/** Logs a detected reuse (no token values) and tells the host through the provider's events. */
export function reportReplay(logger: Logger, provider: Provider | undefined, event: ReplayEvent): void {
  logger.warn(`${event.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} reuse detected: grant revoked`, { ...event });
  provider?.emit(REPLAY_EVENT, event);
}

const REUSE = /^(refresh token already used|authorization code already consumed)$/;

/**
 * oidc-provider's own reuse path: a rotated refresh token (or a redeemed code)
 * presented again makes it revoke the grant and answer invalid_grant, with
 * only a generic `grant.error` event. This turns that into the theft report
 * with client, account and grant. (Two requests racing with the same token
 * are caught by the adapter's atomic consume and reported the same way.)
 */
export function watchReuse(provider: Provider, logger: Logger): void {
  const revoked = new WeakMap<object, string>();
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    if (ctx?.oidc?.route === 'token') revoked.set(ctx, grantId);
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: { error_detail?: string }) => {
    if (!err?.error_detail || !REUSE.test(err.error_detail)) return;
    const token = ctx.oidc.entities.RefreshToken ?? ctx.oidc.entities.AuthorizationCode;
    reportReplay(logger, provider, {
      model: err.error_detail.startsWith('refresh') ? 'RefreshToken' : 'AuthorizationCode',
      grantId: token?.grantId ?? revoked.get(ctx),
      clientId: ctx.oidc.client?.clientId,
      accountId: token?.accountId,
    });
  });
}
