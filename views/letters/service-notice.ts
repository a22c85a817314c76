import { html, type SafeHtml } from '../../src/text/html.ts';
import type { Locale } from '../../src/i18n/index.ts';
import type { Letter } from './shell.ts';
import { automatedLetterHeaders, LETTER_FONT, letterDocument } from './shell.ts';

// A name in a header or our sentence: one line, no bidi overrides.
export const oneLine = (s: string) => s.replace(/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]+/gu, ' ').replace(/\s+/gu, ' ').trim();

/** What a letter from the service itself says, in the reader's language (already escaped where it is untrusted). */
export interface ServiceNoticeLetter {
  locale: Locale;
  serviceName: string;
  subject: string;
  title: string;
  /** Before the way out: the text lines, and the same as HTML. */
  text: string[];
  body: SafeHtml;
  /** After the way out (optional). */
  afterText?: string[];
  after?: SafeHtml;
  /** The way out: "See where you are signed in", to the devices page. */
  link: string;
  sessionsUrl: string;
  /** Why the person gets it (a letter from the service, no unsubscribe). */
  why: string;
}

/**
 * The letter of one of the service's own notices (the theft notice and the
 * security notices): the service's name, the title, what happened, the way
 * out as a button to the devices page, why it came. No unsubscribe link: it
 * concerns the account, not a site's messages.
 */
export function serviceNoticeLetter(input: ServiceNoticeLetter): Letter {
  const { locale, serviceName } = input;
  const text = [
    input.title, '',
    ...input.text,
    `${input.link}:`, input.sessionsUrl, '',
    ...(input.afterText ? [...input.afterText, ''] : []),
    input.why, '',
    `— ${serviceName}`,
  ].join('\n');
  const small = `margin:0;font-family:${LETTER_FONT};font-size:14px;line-height:20px;color:#4b5563;`;
  const doc = letterDocument({ locale, title: input.title, maxWidth: 560, content: html`<p style="margin:0 0 8px 0;font-size:14px;font-weight:700;color:#4b5563;">${serviceName}</p>
<h1 style="margin:0 0 16px 0;font-size:22px;line-height:28px;font-weight:700;color:#111827;">${input.title}</h1>
${input.body}
<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:0 0 20px 0;">
<tr><td style="border-radius:8px;background-color:#1d4ed8;">
<a href="${input.sessionsUrl}" style="display:inline-block;padding:12px 20px;font-family:${LETTER_FONT};font-size:16px;line-height:20px;font-weight:700;color:#ffffff;text-decoration:none;border-radius:8px;">${input.link}</a>
</td></tr>
</table>
${input.after ?? ''}<p style="${small}border-top:1px solid #e5e7eb;padding-top:16px;">${input.why}</p>` });
  return { subject: input.subject, text, html: doc, headers: automatedLetterHeaders(locale) };
}
