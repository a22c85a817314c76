import { csrfField, describedBy, errorMessage, formTargets, html, renderPage, t, type Locale, type Page } from '../../../../src/pages.ts';

export type PasskeySignUpPageInput = {
  locale: Locale;
  serviceName: string;
  csrf: string;
  /** The script file (absolute URL on the service's origin). */
  script: string;
  optionsAction: string;
  action: string;
  /** Back to the sign-in page (the emailed code, the other ways). */
  backHref: string;
  name?: string | undefined;
  /** An error about the name, on its field. */
  error?: string | undefined;
  /** Any other error (the passkey could not be checked, a limit): above the form, announced. */
  alert?: string | undefined;
  formAction?: string[];
};

/**
 * An account with a passkey only, no email address: the person names it (the
 * name their passkey manager shows) and creates the passkey. Without
 * JavaScript (or WebAuthn) the page says so and offers the other ways.
 */
export function passkeySignUpPage(input: PasskeySignUpPageInput): Page {
  const { locale, error } = input;
  const title = t(locale, 'passkey.signup.title');
  const main = html`<h1>${title}</h1>
<p class="lead" id="signup-intro">${t(locale, 'passkey.signup.intro', { serviceName: input.serviceName })}</p>
<p class="muted" id="signup-no-email">${t(locale, 'passkey.signup.no_email')}</p>
${errorMessage('signup-error', input.alert)}
<p class="error" data-nojs>${t(locale, 'passkey.needs_javascript')}</p>
<form id="passkey-create" method="post" action="${input.action}" data-passkey-create data-options="${input.optionsAction}" data-status="passkey-status" data-failed="${t(locale, 'passkey.error.create_cancelled')}" hidden data-passkey-hidden>
${csrfField(input.csrf)}
<input type="hidden" name="response" value="">
<div class="field">
<label for="name">${t(locale, 'passkey.signup.name')}</label>
<p id="name-hint" class="hint">${t(locale, 'passkey.signup.name_hint')}</p>
${errorMessage('name-error', error)}
<input id="name" name="name" type="text" autocomplete="nickname" maxlength="64" required value="${input.name ?? ''}"${describedBy(error && 'name-error', 'name-hint')}${error ? html` aria-invalid="true"` : null}>
</div>
<p id="passkey-status" class="error" role="alert" hidden></p>
<button type="submit" class="primary">${t(locale, 'passkey.signup.submit')}</button>
</form>
<p class="alt"><a href="${input.backHref}">${t(locale, 'passkey.signup.back')}</a></p>`;
  return renderPage({
    locale, title, main, serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.action),
    scriptFiles: [input.script],
  });
}
