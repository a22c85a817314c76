import { t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html } from '../src/text/html.ts';
import { renderPage } from './layout.ts';
import type { Page } from './layout.ts';

export type ErrorPageInput = {
  locale: Locale;
  serviceName: string;
  title: string;
  /** The service's own words (never text taken from the request). */
  message: string;
  status?: number;
  /** Ways on: the person's console, and the site the person came from when known. */
  consoleUrl?: string | undefined;
  site?: { name: string; url: string } | undefined;
};

/** The one error and not-found page of the plugin and the reference provider. */
export function errorPage(input: ErrorPageInput): Page {
  const { locale, title, status } = input;
  const links = [
    input.site ? html`<a class="button primary" href="${input.site.url}">${t(locale, 'error.back_site', { clientName: input.site.name })}</a>` : null,
    input.consoleUrl ? html`<a class="button ${input.site ? 'secondary' : 'primary'}" href="${input.consoleUrl}">${t(locale, 'error.back_console')}</a>` : null,
  ].filter((l) => l !== null);
  const main = html`<h1>${title}</h1>
<p role="alert">${input.message}</p>
${status ? html`<p class="muted">${t(locale, 'error.status', { status })}</p>` : null}
${links.length ? html`<nav class="actions" aria-label="${t(locale, 'error.ways_on')}">${links}</nav>` : null}`;
  return renderPage({ locale, title, main, serviceName: input.serviceName });
}
