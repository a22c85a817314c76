import { t, type Locale } from '../src/i18n/index.ts';
import { html, type SafeHtml } from '../src/text/html.ts';

/** One site's back-channel logout as the person is shown it (src/notify/backchannel-logout.ts). */
export interface LogoutLine {
  /** The site's name (client_name, else its id). */
  site: string;
  state: 'pending' | 'signed_out' | 'unreachable';
  /**
   * Where the person can sign out at the site themselves, shown when it could
   * not be reached: the site's registered `client_uri` (docs/backchannel-logout.md).
   */
  url?: string | undefined;
}

/**
 * Each site's outcome: "Signed out of X", "X could not be reached: you may
 * still be signed in there" (with the way to the site), or still trying.
 */
export function logoutLines(locale: Locale, lines: readonly LogoutLine[], withHeading = true): SafeHtml | null {
  if (lines.length === 0) return null;
  const title = t(locale, 'logouts.title');
  return html`<section class="logouts" aria-label="${title}">
${withHeading ? html`<h2>${title}</h2>` : null}
<ul>
${lines.map((line) => html`<li class="logout-${line.state}">${line.state === 'unreachable'
    ? html`<strong>${t(locale, 'logouts.unreachable', { site: line.site })}</strong>${line.url ? html` <a href="${line.url}">${t(locale, 'logouts.go', { site: line.site })}</a>` : null}`
    : t(locale, line.state === 'signed_out' ? 'logouts.signed_out' : 'logouts.pending', { site: line.site })}</li>`)}
</ul>
</section>`;
}
