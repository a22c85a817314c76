import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { fillHtml, html } from '../../src/text/html.ts';
import { csrfField, describedBy, errorMessage, formTargets, renderPage } from '../layout.ts';
import type { Page } from '../layout.ts';

export type CodePageInput = {
  locale: Locale;
  serviceName: string;
  action: string;
  csrf: string;
  email: string;
  error?: string;
  resendAction?: string;
  /** How long the emailed code lives; the default matches the letter. */
  minutes?: number;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
};

export function codePage(input: CodePageInput): Page {
  const { locale, error, resendAction } = input;
  const title = t(locale, 'code.title');
  const intro = fillHtml(t(locale, 'code.intro', { minutes: input.minutes ?? 10 }), {
    email: html`<strong>${input.email}</strong>`,
  });
  const main = html`<h1>${title}</h1>
<p>${intro}</p>
<form method="post" action="${input.action}">
${csrfField(input.csrf)}
<div class="field">
<label for="code">${t(locale, 'code.label')}</label>
<p id="code-hint" class="hint">${t(locale, 'code.hint')}</p>
${errorMessage('code-error', error)}
<input id="code" name="code" type="text" class="otp" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}" minlength="6" maxlength="6" required${describedBy(error && 'code-error', 'code-hint')}${error ? html` aria-invalid="true"` : null}>
</div>
<button type="submit" class="primary">${t(locale, 'code.submit')}</button>
</form>
${resendAction ? html`<form method="post" action="${resendAction}" class="alt">
${csrfField(input.csrf)}
<button type="submit" class="link">${t(locale, 'code.change_email')}</button>
</form>` : null}`;
  return renderPage({
    locale,
    title,
    main,
    serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.action, resendAction),
  });
}
