import { t, type Locale, type MessageKey } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { formatDateTime } from '../console.ts';
import type { Letter } from './shell.ts';
import { oneLine, serviceNoticeLetter } from './service-notice.ts';

/** The notices these words are for (src/notify/security-notices.ts SECURITY_NOTICE_KINDS). */
type Kind = 'new_browser' | 'passkey_added' | 'passkey_removed' | 'account_linked' | 'account_unlinked' | 'sessions_ended' | 'site_unreachable'
  | 'upstream_sessions_ended' | 'upstream_account_disabled' | 'upstream_credential_change';

export interface SecurityNoticeInput {
  locale: Locale;
  serviceName: string;
  kind: string;
  /**
   * What the notice names: untrusted text (a User-Agent's browser, a name a
   * person typed). A summary of new browsers also counts them (`count`),
   * with until when they are not told one by one (`until`, ms).
   */
  details: { browser?: string | undefined; name?: string | undefined; count?: number | undefined; until?: number | undefined };
  /** When it happened (ms since the epoch). */
  at: number;
  /** The host's sentence on how its people sign in, in `locale` (option securityNotices.signInCheck); none: not said. */
  signInCheck?: string | undefined;
}

/** A notice's sentences in the reader's language: the title, what happened, then what to do (each a paragraph). */
export interface SecurityNoticeText {
  subject: string;
  title: string;
  what: string;
  /** What to do, a paragraph each; the last is the way out, shown strong. */
  then: string[];
  link: string;
  why: string;
}

// A detail in our sentence: one line, no bidi overrides, no address that becomes a link.
const shown = (s: string | undefined, fallback: string) => (s && oneLine(s) ? neutralizeLinks(oneLine(s), 'title') : fallback);

const KINDS: readonly Kind[] = [
  'new_browser', 'passkey_added', 'passkey_removed', 'account_linked', 'account_unlinked', 'sessions_ended', 'site_unreachable',
  'upstream_sessions_ended', 'upstream_account_disabled', 'upstream_credential_change',
];

/** The way out every notice but one ends with: where the person is signed in, and the host's sentence on how they sign in. */
export function notYou(locale: Locale, signInCheck: string | undefined): string {
  return [t(locale, 'notice.not_you'), signInCheck].filter(Boolean).join(' ');
}

/**
 * A security notice's sentences in the reader's language: for the letter and
 * the inbox entry alike. Each says one thing: what happened, then what to do
 * ("if it was you, nothing"; "not you? see where you are signed in"), except
 * a site that could not be told of a sign-out, where the one thing to do is
 * to sign out there.
 */
export function securityNoticeText(input: SecurityNoticeInput): SecurityNoticeText {
  const { locale, serviceName } = input;
  const kind = (KINDS as readonly string[]).includes(input.kind) ? input.kind as Kind : 'new_browser';
  const count = input.details.count;
  // The day's summary of new browsers (past the first few): its own words.
  const words = kind === 'new_browser' && count !== undefined ? 'new_browsers' : kind;
  const params = {
    serviceName,
    date: formatDateTime(locale, input.at),
    browser: shown(input.details.browser, t(locale, 'notice.browser_unknown')),
    name: shown(input.details.name, t(locale, 'notice.name_unknown')),
    count: count ?? 1,
    until: input.details.until === undefined ? '' : formatDateTime(locale, input.details.until),
  };
  const say = (part: 'subject' | 'title' | 'what' | 'count' | 'todo') => t(locale, `notice.${words}.${part}` as MessageKey, params);
  return {
    subject: oneLine(say('subject')),
    title: say('title'),
    what: words === 'new_browsers' && params.count > 1 ? say('count') : say('what'),
    // A site that could not be told, an upstream that warned of the account: one thing to do, not "if it was you".
    then: kind === 'site_unreachable' ? [say('todo')]
      : kind === 'upstream_account_disabled' ? [say('todo'), notYou(locale, input.signInCheck)]
        : [t(locale, 'notice.if_you'), notYou(locale, input.signInCheck)],
    link: t(locale, 'theft.devices_link'),
    why: t(locale, 'theft.why', { serviceName }),
  };
}

/**
 * The letter of a security notice: what happened and when, then what to do
 * (for most: nothing if it was the person, and the way out if it was not,
 * "See where you are signed in", the devices page with Sign out everywhere).
 * From the service itself: no site's settings apply and no unsubscribe link
 * is offered (it concerns the account).
 */
export function securityLetter(input: SecurityNoticeInput & { sessionsUrl: string }): Letter {
  const lines = securityNoticeText(input);
  const last = lines.then.length - 1;
  return serviceNoticeLetter({
    locale: input.locale, serviceName: input.serviceName, subject: lines.subject, title: lines.title,
    text: [lines.what, ...lines.then.flatMap((line) => ['', line])],
    body: html`<p style="margin:0 0 16px 0;">${lines.what}</p>
${lines.then.map((line, i) => (i === last
    ? html`<p style="margin:0 0 12px 0;font-weight:700;">${line}</p>`
    : html`<p style="margin:0 0 16px 0;">${line}</p>
`))}`,
    link: lines.link, sessionsUrl: input.sessionsUrl, why: lines.why,
  });
}
