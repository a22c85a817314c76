import type { ReplayEvent } from '../../adapters/store-adapter.ts';
import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { Logger } from '../host.ts';
import type { SecurityNotices } from '../notify/security-notices.ts';
import type { SiteAccess } from '../sites/access.ts';

export interface TheftNoticeDeps {
  notices: SecurityNotices;
  access: SiteAccess;
  logger: Logger;
  /** At most one notice per person and site within this many ms. */
  windowMs: number;
}

/**
 * When a rotated refresh token or a redeemed code comes back (theft, RFC 9700
 * section 4.14.2; both the race and oidc-provider's replay path), the person
 * is told with a security notice (src/notify/security-notices.ts), at most one
 * per person and site per window, and every grant of the person at the site
 * goes, the site told (src/tell/: back-channel logout for the person's
 * sessions there, CAEP session-revoked initiated by the system).
 */
export function createTheftNotices(deps: TheftNoticeDeps) {
  /**
   * The notice's durable part (entry stored, letter queued). The site's
   * access ends beside it; its back-channel logout may take seconds and is
   * not waited for.
   */
  return async function notice(event: ReplayEvent, at = Date.now()): Promise<void> {
    const { accountId, clientId } = event;
    if (!accountId || !clientId || clientId === CONSOLE_CLIENT_ID) return;
    deps.access.endAccess(accountId, [clientId], { reason: 'theft', initiator: 'system', sharedSignals: 'always' }).catch((err: Error) => deps.logger.warn('site access not ended after theft', { clientId, reason: err.message }));
    const given = await deps.notices.give(accountId, 'theft', { clientId, at }, deps.windowMs);
    if (given === 'held_back') deps.logger.info('theft notice held back: the person was told about this site within the window', { clientId });
  };
}

export type TheftNotice = ReturnType<typeof createTheftNotices>;
