import { t } from '../../src/i18n/index.ts';
import { encodedWords } from '../../src/text/encoded-words.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { fillHtml, html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { automatedLetterHeaders, LETTER_FONT, letterDocument } from './shell.ts';

export type Category = 'transactional' | 'product' | 'promotions';

export interface NotificationLetterInput {
  /** The reader's language (the account's locale). */
  locale: Locale;
  serviceName: string;
  /** The client's client_name: untrusted text. */
  siteName: string;
  /** Host of the client's site, shown next to its name. */
  siteHost?: string | undefined;
  /** For List-Id. */
  clientId: string;
  /** For List-Id, e.g. `id.example`. */
  issuerHost: string;
  category: Category;
  /** The site's words, verbatim (untrusted). */
  title: string;
  /** The site's words, verbatim (untrusted, may contain newlines). */
  body: string;
  /** The one link, already validated as https on the site's own host. */
  url?: string | undefined;
  /** One-click unsubscribe page (HMAC token inside). */
  unsubscribeUrl: string;
  /** The person's console, where senders and categories are managed. */
  consoleUrl: string;
}

export interface NotificationLetter {
  /** Display name of the From header; the address is the service's own. */
  fromName: string;
  subject: string;
  text: string;
  html: string;
  /** Auto-Submitted (RFC 3834), Content-Language, List-Unsubscribe, List-Unsubscribe-Post (RFC 8058) and List-Id (RFC 2919), pure ASCII. */
  headers: Record<string, string>;
}

const FONT = LETTER_FONT;
const ACCENT = '#1d4ed8';
const MUTED = '#4b5563';
const RULE = '----------------------------------------';

// Control characters (CR, LF, tab, NUL, C1 ...) and the Unicode line and paragraph separators.
const CONTROLS = /[\p{Cc}\u2028\u2029]+/gu;
// Embeddings, overrides and isolates: in a name they could reorder the text around it
// (`Bank\u202E` would turn " via Example ID" around in the From line).
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/gu;

/** One line: header injection is impossible whatever the text contains. */
function oneLine(s: string): string {
  return s.replace(CONTROLS, ' ').trim();
}

/** A name shown in the surrounding text and headers: one line, no bidi overrides, single spaces. */
function cleanName(s: string): string {
  return oneLine(s.replace(BIDI_CONTROLS, '')).replace(/\s+/gu, ' ');
}

/**
 * The body as the site wrote it, with newlines normalised to `\n`. Other
 * control characters (the API refuses them) become U+FFFD, visibly, and
 * before neutralizeLinks runs: deleting them afterwards could join
 * `evil\0.com` into a linkable address.
 */
function bodyText(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/[^\P{Cc}\n\t]/gu, '\uFFFD');
}

/** Parses a link the letter emits; anything but an absolute URL with an allowed scheme is a caller bug. */
function href(value: string, field: string, protocols: readonly string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new TypeError(`notificationLetter: ${field} is not an absolute URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new TypeError(`notificationLetter: ${field} must be ${protocols.join(' or ')}`);
  }
  // The serialised form percent-encodes `"`, `<`, `>`, spaces and drops CR/LF/tab, so it is
  // safe inside <...> in a header; in HTML it is escaped on top.
  return parsed.href;
}

// RFC 5322 atext: a phrase made of these and spaces needs no quoting.
const ATOMS = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]+$/;

/**
 * RFC 2919 List-Id: `phrase <label.notify.issuer-host>`. The id is a
 * dot-atom: lower case, anything outside [a-z0-9-] becomes '-'. The phrase is
 * the site's name without quotes and backslashes, written as plain atoms when
 * it is only atext and spaces (`Book Shop`), else as RFC 2047 encoded-words.
 * Never as a quoted string: nodemailer encodes a whole custom header value
 * that contains a `"` or non-ASCII text, id and angle brackets included, which
 * leaves no List-Id a client can read. Pure ASCII, it passes unchanged.
 */
function listId(siteName: string, clientId: string, issuerHost: string): string {
  const label = clientId.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 63) || 'client';
  const host = issuerHost
    .toLowerCase()
    .replace(/:\d*$/, '') // a port, as in localhost:3000
    .replace(/[[\]]/g, '')
    .split('.')
    .map((part) => part.replace(/[^a-z0-9-]/g, '-'))
    .filter((part) => part !== '')
    .join('.') || 'localhost';
  const id = `<${label}.notify.${host}>`;
  const phrase = [...cleanName(siteName.replace(/["\\]/g, ''))].slice(0, 100).join('').trim();
  if (phrase === '') return id;
  // `=?` in plain atoms would read as an encoded-word: encode those too.
  return ATOMS.test(phrase) && !phrase.includes('=?') ? `${phrase} ${id}` : `${encodedWords(phrase, 'B')} ${id}`;
}

/** The body's lines joined with <br>; every line is escaped. */
function withBreaks(text: string): SafeHtml {
  return html`${text.split('\n').map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}`;
}

/**
 * A site's notification as a letter (SPEC "Send a notification", "Rules for
 * the text of messages"). The site's title and body are shown as written,
 * after neutralizeLinks, in a bordered block of their own and never
 * translated; everything around them (who sent it, why the person receives
 * it, how to stop it) is in the reader's language. The only anchors are the
 * site's `url` (one button), the unsubscribe page and the console.
 */
export function notificationLetter(input: NotificationLetterInput): NotificationLetter {
  const { locale, category } = input;
  const serviceName = cleanName(input.serviceName);
  const siteName = cleanName(input.siteName) || cleanName(input.siteHost ?? '') || cleanName(input.clientId);
  const links = {
    url: input.url === undefined ? undefined : href(input.url, 'url', ['https:']),
    unsubscribe: href(input.unsubscribeUrl, 'unsubscribeUrl', ['https:', 'http:']),
    console: href(input.consoleUrl, 'consoleUrl', ['https:', 'http:']),
  };

  // The site's words: mail clients must not link the addresses in them.
  const title = neutralizeLinks(oneLine(input.title), 'title');
  const body = neutralizeLinks(bodyText(input.body), 'body');
  // The site's name and host in our own sentences are its words too (client_name is untrusted);
  // treated like a title, so not even an https:// address in a name can become a link.
  const shownName = neutralizeLinks(siteName, 'title');
  const shownHost = input.siteHost ? neutralizeLinks(cleanName(input.siteHost), 'title') : '';

  const lines = {
    sentBy: t(locale, 'notify.sent_by', { siteName: shownName, serviceName }),
    messageFrom: t(locale, 'notify.message_from', { siteName: shownName }),
    open: t(locale, 'notify.open', { siteName: shownName }),
    why: t(locale, 'notify.why', { siteName: shownName, serviceName }),
    category: t(locale, 'notify.category', { label: t(locale, `category.${category}`), category }),
    stop: t(locale, 'notify.stop'),
    manage: t(locale, 'notify.manage'),
  };
  const label = shownHost ? `${lines.messageFrom} · ${shownHost}` : lines.messageFrom;

  const text = [
    lines.sentBy,
    '',
    label,
    RULE,
    title,
    '',
    body,
    RULE,
    ...(links.url ? ['', `${lines.open}:`, links.url] : []),
    '',
    lines.why,
    lines.category,
    '',
    `${lines.stop}:`,
    links.unsubscribe,
    '',
    `${lines.manage}:`,
    links.console,
    '',
    `— ${serviceName}`,
  ].join('\n');

  const small = `margin:0;font-family:${FONT};font-size:14px;line-height:20px;color:${MUTED};`;
  const link = `color:${ACCENT};text-decoration:underline;`;
  const button = links.url
    ? html`<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:0 0 24px 0;">
<tr><td style="border-radius:8px;background-color:${ACCENT};">
<a href="${links.url}" style="display:inline-block;padding:12px 20px;font-family:${FONT};font-size:16px;line-height:20px;font-weight:700;color:#ffffff;text-decoration:none;border-radius:8px;">${lines.open}</a>
</td></tr>
</table>`
    : null;

  // dir="auto" on the site's words: a message in another script than the
  // reader's (English in an Arabic letter) keeps its own direction.
  const doc = letterDocument({
    locale, title, maxWidth: 560,
    head: html`<meta name="format-detection" content="telephone=no, date=no, address=no, email=no">`,
    content: html`<p style="margin:0 0 8px 0;font-size:14px;font-weight:700;color:${MUTED};">${serviceName}</p>
<p style="margin:0 0 20px 0;">${fillHtml(t(locale, 'notify.sent_by'), { siteName: html`<strong>${shownName}</strong>`, serviceName })}</p>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="margin:0 0 24px 0;background-color:#f9fafb;border:1px solid #d1d5db;border-radius:8px;">
<tr><td style="padding:16px 20px;font-family:${FONT};color:#111827;">
<p style="margin:0 0 12px 0;font-size:12px;line-height:16px;font-weight:700;letter-spacing:0.02em;color:${MUTED};">${label}</p>
<h1 dir="auto" style="margin:0 0 12px 0;font-size:20px;line-height:28px;font-weight:700;color:#111827;overflow-wrap:anywhere;">${title}</h1>
<p dir="auto" style="margin:0;font-size:16px;line-height:24px;color:#111827;white-space:pre-wrap;overflow-wrap:anywhere;">${withBreaks(body)}</p>
</td></tr>
</table>
${button}
<p style="${small}margin-bottom:4px;">${lines.why}</p>
<p style="${small}margin-bottom:16px;">${lines.category}</p>
<p style="${small}border-top:1px solid #e5e7eb;padding-top:16px;"><a href="${links.unsubscribe}" style="${link}">${lines.stop}</a> · <a href="${links.console}" style="${link}">${lines.manage}</a></p>`,
  });

  return {
    fromName: cleanName(t(locale, 'notify.from', { siteName, serviceName })),
    subject: title,
    text,
    html: doc,
    headers: {
      ...automatedLetterHeaders(locale),
      'List-Unsubscribe': `<${links.unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'List-Id': listId(siteName, input.clientId, input.issuerHost),
    },
  };
}
