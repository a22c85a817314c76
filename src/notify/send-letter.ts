import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type Provider from 'oidc-provider';

import { negotiateLocale, type Locale } from '../i18n/index.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { ContactLookup, Logger } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import { isUnavailable } from '../store/availability.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { notificationLetter } from '../../views/letters/notification.ts';
import { securityLetter } from '../../views/letters/security.ts';
import { theftLetter } from '../../views/letters/theft.ts';
import { PermanentLetterError, type LetterJob, type LetterOutcome, type NotificationLetterJob, type SecurityLetterJob, type TheftLetterJob } from './letters.ts';
import type { Senders } from './senders.ts';
import type { UnsubscribeTokens } from './unsubscribe-token.ts';

export interface SendLetterDeps {
  store: Store;
  sites: ConnectedSites;
  orgs: Organizations;
  senders: Senders;
  contacts: ContactLookup;
  mailer: Mailer;
  tokens: UnsubscribeTokens;
  provider: () => Provider | undefined;
  serviceName: string;
  logger: Logger;
  /** How long a worker holds a letter while sending it: as long as the queue's lock, so both free the letter together when a worker dies. */
  holdMs: number;
  /** The host's sentence on how its people sign in, per language (security letters' "what to check"). */
  signInCheck: (locale: Locale) => string | undefined;
}

/** How long the "sent" marker stays: longer than any retry or re-queue of the same notification. */
const SENT_KEPT_MS = 7 * 24 * 60 * 60_000;

/** Key layout; documented in docs/redis-keys.md ("Redis keys"). */
export function letterKeys(prefix: string) {
  return {
    sent: (id: string) => `${prefix}letter:{${id}}:sent`,
    hold: (id: string) => `${prefix}letter:{${id}}:hold`,
  };
}

/** How often the worker tries again to mark a letter done while Redis is away. */
const DONE_RETRY_MS = 100;

/** SMTP 5xx: refused for good. 4xx and network errors (no response code) are worth a retry. */
function permanent(err: unknown): boolean {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/**
 * The worker's job for one letter. It asks again, right before sending,
 * whether the letter may go (the person may have muted the site, turned the
 * category's email off, unsubscribed or blocked the site since the 202), and
 * sends each notification at most once: a "sent" marker written right after
 * the mail server accepted it, and a hold while sending.
 */
export function letterSender(deps: SendLetterDeps) {
  const keys = letterKeys(deps.store.prefix);
  const holder = randomUUID();

  async function mayStillSend(job: NotificationLetterJob): Promise<string | undefined> {
    const [site, settings, member] = await Promise.all([
      deps.sites.get(job.accountId, job.clientId),
      deps.senders.get(job.accountId, job.clientId),
      deps.orgs.mayUse(job.accountId, job.clientId),
    ]);
    if (site?.status !== 'connected' || site.endedByServiceAt !== undefined || !member) return 'not_connected';
    if (settings.muted) return 'muted';
    if (settings.categories[job.category] === 'off') return 'category_off';
    if (settings.categories[job.category] !== 'account_and_email') return 'email_off';
    return undefined;
  }

  /** Sends the letter once the mail server takes it; a 5xx gives it up, anything else retries it. */
  async function deliver(to: string, letter: { fromName?: string; subject: string; text: string; html: string; headers: Record<string, string> }, id: string): Promise<void> {
    try {
      await deps.mailer.send({ to, ...letter, headers: { ...letter.headers, 'X-Notification-Id': id } });
    } catch (err) {
      if (permanent(err)) throw new PermanentLetterError(`mail server refused the letter (${(err as { responseCode: number }).responseCode})`);
      throw new Error(`mail server unavailable: ${(err as Error).message}`);
    }
  }

  // The worker starts only once there is a provider (attach() or startLetterWorker(provider)).
  const attached = (): Provider => deps.provider()!;

  /** A site's notification: only while the person's settings still let it go by email. */
  async function sendNotification(job: NotificationLetterJob): Promise<LetterOutcome> {
    const reason = await mayStillSend(job);
    if (reason) return `skipped:${reason}`;
    const contact = await deps.contacts(job.accountId);
    if (!contact?.email) return 'skipped:no_email';
    const provider = attached();
    const client = await provider.Client.find(job.clientId);
    if (!client) return 'skipped:unknown_client';
    const issuer = new URL(provider.issuer);
    const base = issuer.href.replace(/\/$/, '');
    let letter: ReturnType<typeof notificationLetter>;
    try {
      letter = notificationLetter({
        locale: negotiateLocale({ preferred: contact.locale }),
        serviceName: deps.serviceName,
        siteName: client.clientName ?? client.clientId,
        siteHost: client.clientUri ? new URL(client.clientUri).host : undefined,
        clientId: client.clientId,
        issuerHost: issuer.host,
        category: job.category,
        title: job.title,
        body: job.body,
        ...(job.url ? { url: job.url } : {}),
        unsubscribeUrl: `${base}/unsubscribe/${deps.tokens.sign({ accountId: job.accountId, clientId: job.clientId, category: job.category })}`,
        consoleUrl: `${base}/console`,
      });
    } catch (err) {
      // A letter that cannot be written now never can (e.g. a url that is no longer acceptable).
      throw new PermanentLetterError(`letter cannot be written: ${(err as Error).message}`);
    }
    await deliver(contact.email, letter, job.id);
    return 'sent';
  }

  /** The service's theft notice: no site's setting holds it back, only a missing address. */
  async function sendTheftNotice(job: TheftLetterJob): Promise<LetterOutcome> {
    const contact = await deps.contacts(job.accountId);
    if (!contact?.email) return 'skipped:no_email';
    const provider = attached();
    const client = await provider.Client.find(job.clientId).catch(() => undefined);
    const locale = negotiateLocale({ preferred: contact.locale });
    const letter = theftLetter({
      locale,
      signInCheck: deps.signInCheck(locale),
      serviceName: deps.serviceName,
      siteName: client?.clientName ?? job.clientId,
      at: job.at,
      sessionsUrl: `${provider.issuer.replace(/\/$/, '')}/console/sessions`,
    });
    await deliver(contact.email, letter, job.id);
    return 'sent';
  }

  /**
   * Marks the letter done: sent (never again) or not, and frees the hold.
   * While Redis is away (an outage, a failover) the mark is tried again until
   * the hold runs out: a letter the mail server took and left unmarked would
   * go again at its next try, and a hold left in place fails every try until
   * it runs out. Past the hold another worker may have the letter.
   */
  async function markDone(id: string, sent: boolean, holdEnds: number): Promise<void> {
    for (;;) {
      try {
        await deps.store.run(commands.letterDone(), [keys.sent(id), keys.hold(id)], [sent ? '1' : '0', SENT_KEPT_MS]);
        return;
      } catch (err) {
        if (!isUnavailable(err) || Date.now() + DONE_RETRY_MS >= holdEnds) throw err;
        await sleep(DONE_RETRY_MS);
      }
    }
  }

  /** A security notice of the service's own: like the theft notice, only a missing address holds it back. */
  async function sendSecurityNotice(job: SecurityLetterJob): Promise<LetterOutcome> {
    const contact = await deps.contacts(job.accountId);
    if (!contact?.email) return 'skipped:no_email';
    const provider = attached();
    const locale = negotiateLocale({ preferred: contact.locale });
    const letter = securityLetter({
      locale,
      signInCheck: deps.signInCheck(locale),
      serviceName: deps.serviceName,
      kind: job.notice,
      details: job.details,
      at: job.at,
      sessionsUrl: `${provider.issuer.replace(/\/$/, '')}/console/sessions`,
    });
    await deliver(contact.email, letter, job.id);
    return 'sent';
  }

  const send = (job: LetterJob): Promise<LetterOutcome> => {
    if (job.kind === 'theft') return sendTheftNotice(job);
    if (job.kind === 'security') return sendSecurityNotice(job);
    return sendNotification(job);
  };

  return async (job: LetterJob): Promise<LetterOutcome> => {
    const holdEnds = Date.now() + deps.holdMs;
    const claim = await deps.store.run(commands.letterClaim(), [keys.sent(job.id), keys.hold(job.id)], [deps.holdMs, holder]);
    if (claim === 'sent') return 'already_sent';
    if (claim === 'held') throw new Error('another worker is sending this letter');
    let sent = false;
    try {
      const outcome = await send(job);
      sent = outcome === 'sent';
      if (sent) deps.logger.info('letter sent', { notificationId: job.id, ...(job.kind === 'security' ? { notice: job.notice } : { clientId: job.clientId }) });
      return outcome;
    } finally {
      await markDone(job.id, sent, holdEnds);
    }
  };
}
