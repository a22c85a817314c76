import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { fillHtml, html } from '../../src/text/html.ts';
import { csrfField, describedBy, errorMessage, formTargets, renderPage } from '../layout.ts';
import type { Page } from '../layout.ts';

export type LoginPageInput = {
  locale: Locale;
  serviceName: string;
  clientName?: string;
  action: string;
  csrf: string;
  email?: string;
  error?: string;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
};

export function loginPage(input: LoginPageInput): Page {
  const { locale, clientName, error } = input;
  const title = t(locale, 'login.title');
  const main = html`<h1>${title}</h1>
${clientName ? html`<p class="lead">${fillHtml(t(locale, 'login.subtitle'), { clientName: html`<strong>${clientName}</strong>` })}</p>` : null}
<p id="email-intro">${t(locale, 'login.intro')}</p>
<form method="post" action="${input.action}">
${csrfField(input.csrf)}
<div class="field">
<label for="email">${t(locale, 'login.email.label')}</label>
${errorMessage('email-error', error)}
<input id="email" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required value="${input.email ?? ''}"${describedBy(error && 'email-error', 'email-intro')}${error ? html` aria-invalid="true"` : null}>
</div>
<button type="submit" class="primary">${t(locale, 'login.submit')}</button>
</form>`;
  return renderPage({ locale, title, main, serviceName: input.serviceName, formAction: formTargets(input.formAction, input.action) });
}
