import { t, type Locale, type MessageKey } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { formatDateTime } from '../console.ts';
import type { Letter } from './shell.ts';
import { oneLine, serviceNoticeLetter } from './service-notice.ts';

/** The notices these words are for (src/notify/security-notices.ts SECURITY_NOTICE_KINDS). */
type Kind = 'new_browser' | 'passkey_added' | 'passkey_removed' | 'account_linked' | 'account_unlinked' | 'sessions_ended' | 'site_unreachable';

export interface SecurityNoticeInput {
  locale: Locale;
  serviceName: string;
  kind: string;
  /** What the notice names: untrusted text (a User-Agent's browser, a name a person typed). */
  details: { browser?: string | undefined; name?: string | undefined };
  /** When it happened (ms since the epoch). */
  at: number;
}

// A detail in our sentence: one line, no bidi overrides, no address that becomes a link.
const shown = (s: string | undefined, fallback: string) => (s && oneLine(s) ? neutralizeLinks(oneLine(s), 'title') : fallback);

const KINDS: readonly Kind[] = ['new_browser', 'passkey_added', 'passkey_removed', 'account_linked', 'account_unlinked', 'sessions_ended', 'site_unreachable'];

/** A security notice's sentences in the reader's language: for the letter and the inbox entry alike. */
export function securityNoticeText(input: SecurityNoticeInput) {
  const { locale, serviceName } = input;
  const kind = (KINDS as readonly string[]).includes(input.kind) ? input.kind as Kind : 'new_browser';
  const params = {
    serviceName,
    date: formatDateTime(locale, input.at),
    browser: shown(input.details.browser, t(locale, 'notice.browser_unknown')),
    name: shown(input.details.name, t(locale, 'notice.name_unknown')),
  };
  const say = (part: 'subject' | 'title' | 'what') => t(locale, `notice.${kind}.${part}` as MessageKey, params);
  return {
    subject: oneLine(say('subject')),
    title: say('title'),
    what: say('what'),
    ifYou: t(locale, 'notice.if_you'),
    notYou: t(locale, 'notice.not_you'),
    link: t(locale, 'theft.devices_link'),
    why: t(locale, 'theft.why', { serviceName }),
  };
}

/**
 * The letter of a security notice: what happened and when, that nothing is
 * to do if it was the person, and the way out if it was not ("See where you
 * are signed in", the devices page with Sign out everywhere). From the
 * service itself: no site's settings apply and no unsubscribe link is
 * offered (it concerns the account).
 */
export function securityLetter(input: SecurityNoticeInput & { sessionsUrl: string }): Letter {
  const lines = securityNoticeText(input);
  return serviceNoticeLetter({
    locale: input.locale, serviceName: input.serviceName, subject: lines.subject, title: lines.title,
    text: [lines.what, '', lines.ifYou, '', lines.notYou],
    body: html`<p style="margin:0 0 16px 0;">${lines.what}</p>
<p style="margin:0 0 16px 0;">${lines.ifYou}</p>
<p style="margin:0 0 12px 0;font-weight:700;">${lines.notYou}</p>`,
    link: lines.link, sessionsUrl: input.sessionsUrl, why: lines.why,
  });
}
