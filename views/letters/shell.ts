import { direction } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';

/** The letters' font stack: system fonts only, no downloads. */
/** A rendered letter: subject, plain-text and HTML parts, and its headers. */
export type Letter = { subject: string; text: string; html: string; headers: Record<string, string> };

export const LETTER_FONT = "-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";

/**
 * The frame every letter shares: `lang` and `dir` on `<html>` and on a
 * wrapper div (some clients drop the html element), a centred card of a table
 * layout with inline styles only, no scripts, no remote content.
 */
export function letterDocument(input: { locale: Locale; title: string; maxWidth: number; content: SafeHtml; head?: SafeHtml }): string {
  const { locale } = input;
  const dir = direction(locale);
  return html`<!doctype html>
<html lang="${locale}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
${input.head ?? null}
<title>${input.title}</title>
</head>
<body style="margin:0;padding:0;background-color:#f3f4f6;">
<div lang="${locale}" dir="${dir}" style="padding:24px 12px;background-color:#f3f4f6;font-family:${LETTER_FONT};color:#111827;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:${input.maxWidth}px;margin:0 auto;background-color:#ffffff;border:1px solid #e5e7eb;border-radius:12px;">
<tr><td style="padding:32px 28px;font-family:${LETTER_FONT};font-size:16px;line-height:24px;color:#111827;">
${input.content}
</td></tr>
</table>
</div>
</body>
</html>
`.toString();
}

/**
 * Headers of every letter the service writes: sent by a program, not a
 * person (RFC 3834: auto-responders and vacation replies stay quiet), and the
 * language of its surrounding text (RFC 3282).
 */
export function automatedLetterHeaders(locale: Locale): Record<string, string> {
  return { 'Auto-Submitted': 'auto-generated', 'Content-Language': locale };
}
