import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { formatDateTime } from '../console.ts';
import type { Letter } from './shell.ts';
import { oneLine, serviceNoticeLetter } from './service-notice.ts';

export interface TheftNoticeInput {
  locale: Locale;
  serviceName: string;
  /** The site's client_name: untrusted text. */
  siteName: string;
  /** When the reuse was detected (ms since the epoch). */
  at: number;
  /** The person's list of where they are signed in. */
  sessionsUrl: string;
  /** The host's sentence on how its people sign in, in `locale` (option securityNotices.signInCheck): the last thing to check. */
  signInCheck?: string | undefined;
}

/** The notice's sentences in the reader's language: for the letter and the inbox entry alike. */
export function theftNoticeText(input: Omit<TheftNoticeInput, 'sessionsUrl'>) {
  const { locale, serviceName } = input;
  // The site's name is its own words: no address in it may become a link.
  const siteName = neutralizeLinks(oneLine(input.siteName), 'title');
  return {
    title: t(locale, 'theft.title', { siteName }),
    what: t(locale, 'theft.what', { siteName, date: formatDateTime(locale, input.at) }),
    done: t(locale, 'theft.done', { siteName }),
    check: t(locale, 'theft.check'),
    checks: [
      t(locale, 'theft.check_devices', { serviceName }),
      t(locale, 'theft.check_site', { siteName }),
      ...(input.signInCheck ? [input.signInCheck] : []),
    ],
    fine: t(locale, 'theft.fine'),
    link: t(locale, 'theft.devices_link'),
    subject: oneLine(t(locale, 'theft.subject', { siteName, serviceName })),
    why: t(locale, 'theft.why', { serviceName }),
  };
}

/**
 * The letter that tells a person a sign-in of theirs was used twice (refresh
 * token reuse, RFC 9700 section 4.14.2): which site, when, that its access
 * ended and it will ask them to sign in again, and what to check. From the
 * service itself, not subject to any site's settings; no unsubscribe link
 * (a security notice, rate-limited per person and site instead).
 */
export function theftLetter(input: TheftNoticeInput): Letter {
  const lines = theftNoticeText(input);
  return serviceNoticeLetter({
    locale: input.locale, serviceName: input.serviceName, subject: lines.subject, title: lines.title,
    text: [lines.what, '', lines.done, '', lines.check, ...lines.checks.map((line) => `- ${line}`), ''],
    body: html`<p style="margin:0 0 16px 0;">${lines.what}</p>
<p style="margin:0 0 16px 0;">${lines.done}</p>
<p style="margin:0 0 8px 0;font-weight:700;">${lines.check}</p>
<ul style="margin:0 0 20px 0;padding-inline-start:20px;">
${lines.checks.map((line) => html`<li style="margin:0 0 6px 0;">${line}</li>`)}
</ul>`,
    afterText: [lines.fine],
    after: html`<p style="margin:0 0 16px 0;">${lines.fine}</p>
`,
    link: lines.link, sessionsUrl: input.sessionsUrl, why: lines.why,
  });
}
