import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { ReplayEvent } from '../../adapters/store-adapter.ts';

/** oidc-provider's error_detail for a token or code presented again (lib/actions/grants/*.js). */
const REUSE = new Set(['refresh token already used', 'authorization code already consumed']);

/**
 * oidc-provider's own reuse path: a rotated refresh token (or a redeemed code)
 * presented again makes it revoke the grant and answer invalid_grant, with
 * only a generic `grant.error` event. This turns that into the theft report
 * with client, account and grant. (Two requests racing with the same token
 * are caught by the adapter's atomic consume and reported the same way.)
 */
export function watchReuse(
  provider: Provider,
  report: (event: ReplayEvent, ctx: object) => void,
  consumedSource: (ctx: object) => { accountId?: string } | undefined,
): void {
  const revoked = new WeakMap<object, string>();
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    if (ctx?.oidc?.route === 'token') revoked.set(ctx, grantId);
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: { error_detail?: string }) => {
    if (!err?.error_detail || !REUSE.has(err.error_detail)) return;
    // A reused code is not named on the request (oidc-provider throws first): the adapter read it.
    const token = ctx.oidc.entities.RefreshToken ?? ctx.oidc.entities.AuthorizationCode;
    const source = consumedSource(ctx);
    report({
      model: err.error_detail.startsWith('refresh') ? 'RefreshToken' : 'AuthorizationCode',
      grantId: token?.grantId ?? revoked.get(ctx),
      clientId: ctx.oidc.client?.clientId,
      accountId: token?.accountId ?? source?.accountId,
    }, ctx);
  });
}
