/**
 * The reference provider's "Your account" section of the console (a host
 * section): "Download a copy of your data" (the plugin's
 * GET /console/api/export) and "Delete my account", whose confirmation page
 * is a plain form (no script), and the page that says it is done.
 */
import { buttonForm, html, renderPage, t, type Locale, type Page, type SafeHtml } from '../../../../src/pages.ts';

export function accountSection(locale: Locale): SafeHtml {
  return html`<p>${t(locale, 'console.account.export_intro')}</p>
<div class="actions"><a class="button secondary" href="/console/api/export" download>${t(locale, 'console.account.export')}</a></div>
<p>${t(locale, 'console.account.delete_intro')}</p>
<div class="actions"><a class="button danger" href="/console/delete-account">${t(locale, 'console.account.delete')}</a></div>`;
}

export function deleteAccountPage(input: { locale: Locale; serviceName: string; csrf: string }): Page {
  const { locale, serviceName } = input;
  const main = html`<h1>${t(locale, 'console.delete.title')}</h1>
<p class="lead">${t(locale, 'console.delete.intro')}</p>
<p class="muted">${t(locale, 'console.delete.keep')}</p>
<div class="actions">
${buttonForm('/console/delete-account', input.csrf, t(locale, 'console.delete.submit'), 'danger')}
<a class="button secondary" href="/console#account">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title: t(locale, 'console.delete.title'), main, serviceName });
}

export function accountDeletedPage(input: { locale: Locale; serviceName: string }): Page {
  const { locale, serviceName } = input;
  const main = html`<h1>${t(locale, 'console.delete.done_title')}</h1>
<p class="lead">${t(locale, 'console.delete.done')}</p>`;
  return renderPage({ locale, title: t(locale, 'console.delete.done_title'), main, serviceName });
}
