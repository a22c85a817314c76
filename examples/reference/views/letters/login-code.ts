import { automatedLetterHeaders, html, letterDocument, neutralizeLinks, t, type Locale, type RenderedLetter } from '../../../../src/pages.ts';

export type LoginCodeLetterInput = {
  locale: Locale;
  code: string;
  serviceName: string;
  /** The site the person is signing in to (its client_name: untrusted text). */
  clientName?: string | undefined;
  minutes?: number;
};

const MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,'Courier New',monospace";

// A header value must stay on one line whatever the service name contains.
function oneLine(s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim();
}

export function loginCodeLetter({ locale, code, serviceName, clientName, minutes = 10 }: LoginCodeLetterInput): RenderedLetter {
  // A site's name is its own words: no address in it may become a link.
  const site = clientName ? neutralizeLinks(oneLine(clientName), 'title') : '';
  const lines = {
    title: t(locale, 'letter.title'),
    intro: site ? t(locale, 'letter.intro_site', { serviceName, clientName: site }) : t(locale, 'letter.intro', { serviceName }),
    expires: t(locale, 'letter.expires', { minutes }),
    ignore: t(locale, 'letter.ignore'),
    neverShare: t(locale, 'letter.never_share', { serviceName }),
  };
  const subject = oneLine(t(locale, 'letter.subject', { code, serviceName }));
  const text = [lines.intro, '', `    ${code}`, '', lines.expires, '', lines.ignore, lines.neverShare, '', `— ${serviceName}`].join('\n');
  const doc = letterDocument({ locale, title: lines.title, maxWidth: 480, content: html`<p style="margin:0 0 8px 0;font-size:14px;font-weight:700;color:#4b5563;">${serviceName}</p>
<h1 style="margin:0 0 16px 0;font-size:22px;line-height:28px;font-weight:700;color:#111827;">${lines.title}</h1>
<p style="margin:0 0 16px 0;">${lines.intro}</p>
<p style="margin:0 0 16px 0;padding:16px;background-color:#f3f4f6;border-radius:8px;text-align:center;font-family:${MONO};font-size:32px;line-height:40px;font-weight:700;letter-spacing:8px;color:#111827;">${code}</p>
<p style="margin:0 0 16px 0;">${lines.expires}</p>
<p style="margin:0 0 8px 0;font-size:14px;line-height:20px;color:#4b5563;">${lines.ignore}</p>
<p style="margin:0;font-size:14px;line-height:20px;color:#4b5563;">${lines.neverShare}</p>` });
  return { subject, text, html: doc, headers: automatedLetterHeaders(locale) };
}
