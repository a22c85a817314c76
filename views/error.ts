import { t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html } from '../src/text/html.ts';
import { renderPage } from './layout.ts';
import type { Page } from './layout.ts';

export type ErrorPageInput = {
  locale: Locale;
  serviceName: string;
  title: string;
  message: string;
  status?: number;
};

export function errorPage(input: ErrorPageInput): Page {
  const { locale, title, status } = input;
  const main = html`<h1>${title}</h1>
<p role="alert">${input.message}</p>
${status ? html`<p class="muted">${t(locale, 'error.status', { status })}</p>` : null}`;
  return renderPage({ locale, title, main, serviceName: input.serviceName });
}
