import { t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html } from '../src/text/html.ts';
import { decisionForm, formTargets, renderPage } from './layout.ts';
import type { Page } from './layout.ts';

export type BlockedSitePageInput = {
  locale: Locale;
  serviceName: string;
  clientName: string;
  /** When the person blocked the site (ms since the epoch). */
  blockedAt: number;
  accountEmail?: string | undefined;
  unblockAction: string;
  cancelAction: string;
  csrf: string;
  /** The site's redirect targets: both answers end there (CSP form-action). */
  formAction?: string[];
};

/** The date in the reader's language; UTC, since the service does not know the reader's time zone. */
export function formatDate(locale: Locale, at: number): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(at);
}

/**
 * Shown when a site the person blocked sends them to sign in: what blocking
 * means, and the two ways on. Cancel, the safe choice, comes first and is
 * the primary button. Works without JavaScript.
 */
export function blockedSitePage(input: BlockedSitePageInput): Page {
  const { locale, clientName } = input;
  const title = t(locale, 'blocked.title', { clientName, date: formatDate(locale, input.blockedAt) });
  const main = html`<h1>${title}</h1>
${input.accountEmail ? html`<p class="lead">${t(locale, 'consent.signed_in_as', { email: input.accountEmail })}</p>` : null}
<p>${t(locale, 'blocked.body', { clientName })}</p>
<ul class="list">
<li>${t(locale, 'blocked.cancel_explain', { clientName })}</li>
<li>${t(locale, 'blocked.unblock_explain', { clientName })}</li>
</ul>
<div class="actions">
${decisionForm(input.cancelAction, input.csrf, t(locale, 'blocked.cancel'), 'primary')}
${decisionForm(input.unblockAction, input.csrf, t(locale, 'blocked.unblock'), 'secondary')}
</div>`;
  return renderPage({
    locale, title, main, serviceName: input.serviceName,
    formAction: formTargets(input.formAction),
  });
}
