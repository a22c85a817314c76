import type { ReplayEvent } from '../../adapters/store-adapter.ts';
import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { ContactLookup, Logger } from '../host.ts';
import { randomId } from '../random-pool.ts';
import type { SiteAccess } from '../sites/access.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { inboxKeys, type InboxEntry } from '../notify/inbox.ts';
import type { LetterQueue } from '../notify/letters.ts';

export interface TheftNoticeDeps {
  store: Store;
  queue: LetterQueue;
  contacts: ContactLookup;
  access: SiteAccess;
  logger: Logger;
  /** At most one notice per person and site within this many ms. */
  windowMs: number;
  inbox: { size: number; maxAgeMs: number };
}

/** Key layout; documented in docs/redis-keys.md ("Redis keys"). */
export function theftNoticeKeys(prefix: string) {
  return {
    /** The last notice's id for this site and person, for the window (a TTL). */
    limit: (accountId: string, clientId: string) => `${prefix}account:{${accountId}}:theft-notice:${clientId}`,
    ...inboxKeys(prefix),
  };
}

/**
 * When a rotated refresh token or a redeemed code comes back (theft, RFC 9700
 * section 4.14.2; both the race and oidc-provider's replay path), the person
 * is told: an inbox entry from the service itself and a letter in their
 * language, not subject to any site's mute or category, at most one per
 * person and site per window. Every grant of the person at the site goes,
 * and the site gets back-channel logout for the person's sessions there.
 */
export function createTheftNotices(deps: TheftNoticeDeps) {
  const keys = theftNoticeKeys(deps.store.prefix);

  /**
   * The notice's durable part (entry stored, letter queued). The site's
   * access ends beside it; its back-channel logout may take seconds and is
   * not waited for.
   */
  return async function notice(event: ReplayEvent, at = Date.now()): Promise<void> {
    const { accountId, clientId } = event;
    if (!accountId || !clientId || clientId === CONSOLE_CLIENT_ID) return;
    deps.access.cutAccess(accountId, clientId).catch((err: Error) => deps.logger.warn('site access not ended after theft', { clientId, reason: err.message }));
    const id = randomId();
    // The words are the service's, written in the reader's language when shown (views/letters/theft.ts).
    const entry: InboxEntry = { id, clientId, category: 'security', title: '', body: '', url: null, receivedAt: at, notice: 'theft' };
    const stored = await deps.store.run(
      commands.theftNotice(),
      [keys.limit(accountId, clientId), keys.order(accountId), keys.entries(accountId), keys.unread(accountId)],
      [deps.windowMs, id, JSON.stringify(entry), at, deps.inbox.size, deps.inbox.maxAgeMs],
    );
    if (stored !== 1) {
      deps.logger.info('theft notice held back: the person was told about this site within the window', { clientId });
      return;
    }
    const contact = await deps.contacts(accountId);
    if (contact?.email) await deps.queue.add({ kind: 'theft', id, accountId, clientId, at });
    deps.logger.info('theft notice given', { clientId, letter: Boolean(contact?.email) });
  };
}

export type TheftNotice = ReturnType<typeof createTheftNotices>;
