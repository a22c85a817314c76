import { hash } from 'node:crypto';

import type { ContactLookup, Logger } from '../host.ts';
import type { Locale } from '../i18n/index.ts';
import { randomId } from '../random-pool.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { inboxKeys, type InboxEntry } from './inbox.ts';
import type { LetterQueue } from './letters.ts';

/**
 * What a security notice tells the person (each with its words in every
 * language: views/letters/security.ts). The theft notice (a sign-in used
 * twice at a site) is one too, given by src/theft/.
 */
export const SECURITY_NOTICE_KINDS = [
  'new_browser', 'passkey_added', 'passkey_removed', 'account_linked', 'account_unlinked', 'sessions_ended', 'site_unreachable',
  'upstream_sessions_ended', 'upstream_account_disabled', 'upstream_credential_change',
] as const;
export type SecurityNoticeKind = typeof SECURITY_NOTICE_KINDS[number];

export const isSecurityNoticeKind = (value: unknown): value is SecurityNoticeKind =>
  typeof value === 'string' && (SECURITY_NOTICE_KINDS as readonly string[]).includes(value);

/**
 * What the notice names. Every part is shown as text under the spec's text
 * rules (no address in it becomes a link), one line each.
 */
export interface SecurityNoticeDetails {
  /** The browser and system ("Firefox on Windows"), or a User-Agent the notice describes so. */
  browser?: string | undefined;
  /** The passkey's name, or the linked account's provider ("Acme Login"). */
  name?: string | undefined;
  /**
   * What the notice is about, never shown: two notices of one kind with the
   * same `ref` (a credential id, an upstream's id) within a day are one. By
   * default the shown details tell repeats apart.
   */
  ref?: string | undefined;
  /** When it happened (ms since the epoch); now by default. */
  at?: number | undefined;
}

/**
 * What a notice keeps of its details (the inbox entry's and the letter's).
 * A summary of new browsers (the ones past the first few of a day) also
 * counts them (`count`), says until when they are not told one by one
 * (`until`, ms) and when the latest came (`last`, ms).
 */
export type NoticeDetails = Pick<SecurityNoticeDetails, 'browser' | 'name'> & { count?: number; until?: number; last?: number };

/**
 * `given`: the inbox entry is stored and the letter queued (when the person
 * has an address); `held_back`: the same was told within the day;
 * `coalesced`: a new browser past the first few of the day, counted in the
 * day's summary entry (no letter); `off`: the host turned this kind off
 * (`securityNotices`), nothing is stored or sent.
 */
export type SecurityNoticeResult = 'given' | 'held_back' | 'coalesced' | 'off';

/**
 * How the host's people sign in, in the words of the letters' "what to
 * check" (option `securityNotices.signInCheck`): one sentence per language,
 * or a function of the language. A language without one gets none.
 */
export type SignInCheck = Partial<Record<Locale, string>> | ((locale: Locale) => string | undefined);

/** The sentence for `locale`, or none (a function that throws or answers no text gives none). */
export function signInCheckFor(check: SignInCheck | undefined, logger: Logger): (locale: Locale) => string | undefined {
  if (!check) return () => undefined;
  return (locale) => {
    let sentence: unknown;
    try {
      sentence = typeof check === 'function' ? check(locale) : check[locale];
    } catch (err) {
      logger.warn('securityNotices.signInCheck threw; the letter goes without it', { reason: (err as Error).message });
    }
    return typeof sentence === 'string' && sentence.trim() ? sentence.trim() : undefined;
  };
}

const DAY_MS = 24 * 60 * 60_000;
/** New-browser notices told one by one per person and day; the next starts one summary that counts the rest. */
export const NEW_BROWSERS_TOLD_EACH = 3;
/** Details are a line each: a longer one is cut (a User-Agent, a name a thief typed). */
const MAX_DETAIL = 200;

/** Key layout; documented in docs/redis-keys.md. */
export function securityNoticeKeys(prefix: string) {
  return {
    /** The last notice of a kind about one subject for this person, for the day (a TTL); the subject is hashed. */
    limit: (accountId: string, kind: string, subject: string) => `${prefix}account:{${accountId}}:notice:${kind}:${hash('sha256', subject, 'base64url')}`,
    /** Hash: the person's new browsers of the day (n, the summary entry's id, until when); TTL the day from the first. */
    newBrowsers: (accountId: string) => `${prefix}account:{${accountId}}:notices:new_browser`,
    ...inboxKeys(prefix),
  };
}

export interface SecurityNoticeDeps {
  store: Store;
  queue: LetterQueue;
  contacts: ContactLookup;
  logger: Logger;
  inbox: { size: number; maxAgeMs: number };
  /** Which kinds the host wants told (option `securityNotices`); the theft notice is always on. */
  enabled: Record<SecurityNoticeKind, boolean>;
}

/**
 * Security notices (docs/security.md "Security notices"): an inbox entry from
 * the service itself and a letter in the person's language, which no site's
 * mute, category setting or unsubscribe link holds back (they are about the
 * account, not from a site), each with the way out: "Not you? See where you
 * are signed in". Repeats that say nothing new are told once a day; new
 * browsers past the first three of a day become one summary.
 */
export function createSecurityNotices(deps: SecurityNoticeDeps) {
  const keys = securityNoticeKeys(deps.store.prefix);
  const clean = (value: string | undefined) => (value === undefined ? undefined : value.slice(0, MAX_DETAIL));

  /**
   * Gives a notice: entry stored and letter queued, unless the same was told
   * within `windowMs`. `clientId` names the site a notice is about (theft).
   */
  async function give(accountId: string, kind: SecurityNoticeKind | 'theft', details: SecurityNoticeDetails & { clientId?: string }, windowMs = DAY_MS): Promise<SecurityNoticeResult> {
    if (kind !== 'theft' && !deps.enabled[kind]) return 'off';
    const at = details.at ?? Date.now();
    const shown: NoticeDetails = {
      ...(details.browser !== undefined ? { browser: clean(details.browser) } : {}),
      ...(details.name !== undefined ? { name: clean(details.name) } : {}),
    };
    const subject = details.ref ?? details.clientId ?? JSON.stringify(shown);
    const id = randomId();
    // The words are the service's, written in the reader's language when shown.
    const entry: InboxEntry = { id, clientId: details.clientId ?? '', category: 'security', title: '', body: '', url: null, receivedAt: at, notice: kind, ...(Object.keys(shown).length ? { details: shown } : {}) };
    const inbox = [keys.order(accountId), keys.entries(accountId), keys.unread(accountId)];
    const inboxArgs = [deps.inbox.size, deps.inbox.maxAgeMs];
    let told: 'given' | 'held_back' | 'coalesced' = 'held_back';
    if (kind === 'new_browser') {
      const [result, until] = await deps.store.run(
        commands.newBrowserNotice(),
        [keys.limit(accountId, kind, subject), keys.newBrowsers(accountId), ...inbox],
        [windowMs, id, JSON.stringify(entry), at, ...inboxArgs, NEW_BROWSERS_TOLD_EACH, at + windowMs],
      ) as [string, string?];
      if (result === 'summary') {
        shown.count = 1;
        shown.until = Number(until);
      }
      told = result === 'given' || result === 'summary' ? 'given' : result as 'held_back' | 'coalesced';
    } else {
      const stored = await deps.store.run(commands.securityNotice(), [keys.limit(accountId, kind, subject), ...inbox], [windowMs, id, JSON.stringify(entry), at, ...inboxArgs]);
      if (stored === 1) told = 'given';
    }
    if (told !== 'given') {
      deps.logger.info(told === 'held_back' ? 'security notice held back: the same was told within the window' : 'security notice counted in the day\'s summary', { kind });
      return told;
    }
    const contact = await deps.contacts(accountId);
    if (contact?.email) {
      await deps.queue.add(kind === 'theft'
        ? { kind: 'theft', id, accountId, clientId: details.clientId!, at }
        : { kind: 'security', id, accountId, notice: kind, details: shown, at });
    }
    deps.logger.info('security notice given', { kind, letter: Boolean(contact?.email) });
    return 'given';
  }

  return { give };
}

export type SecurityNotices = ReturnType<typeof createSecurityNotices>;
