import { csrfField, describedBy, errorMessage, fillHtml, formTargets, html, renderPage, t, type Locale, type Page } from '../../../../src/pages.ts';

export type CodePageInput = {
  locale: Locale;
  serviceName: string;
  action: string;
  csrf: string;
  email: string;
  /** An error about the code, shown on the code field (or above "Send a new code" when there is no code to type). */
  error?: string | undefined;
  /** False when the code expired or its attempts are used up: only "Send a new code" helps. */
  usable?: boolean;
  /** A new code was just sent ("Send a new code"). */
  resent?: boolean;
  /** Sends a new code to the same address. */
  resendAction?: string;
  /** Back to the address form. */
  restartAction?: string;
  /** How long the emailed code lives; the default matches the letter. */
  minutes?: number;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
};

/**
 * The code step: the code field with its error, "Send a new code" (same
 * address, same limits) and "Use a different email address". When the code
 * can no longer be used, the field gives way to "Send a new code".
 */
export function codePage(input: CodePageInput): Page {
  const { locale, error, resendAction, restartAction } = input;
  const usable = input.usable ?? true;
  const title = t(locale, 'code.title');
  const email = html`<strong>${input.email}</strong>`;
  const intro = input.resent
    ? fillHtml(t(locale, 'code.resent'), { email })
    : fillHtml(t(locale, 'code.intro', { minutes: input.minutes ?? 10 }), { email });
  const resend = resendAction
    ? html`<form method="post" action="${resendAction}"${usable ? html` class="alt"` : null}>
${csrfField(input.csrf)}
<button type="submit" class="${usable ? 'link' : 'primary'}">${t(locale, 'code.resend')}</button>
</form>`
    : null;
  const main = html`<h1>${title}</h1>
<p${input.resent ? html` role="status"` : null}>${intro}</p>
${usable
    ? html`<form method="post" action="${input.action}">
${csrfField(input.csrf)}
<div class="field">
<label for="code">${t(locale, 'code.label')}</label>
<p id="code-hint" class="hint">${t(locale, 'code.hint')}</p>
${errorMessage('code-error', error)}
<input id="code" name="code" type="text" class="otp" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6}" minlength="6" maxlength="6" required${describedBy(error && 'code-error', 'code-hint')}${error ? html` aria-invalid="true" autofocus` : null}>
</div>
<button type="submit" class="primary">${t(locale, 'code.submit')}</button>
</form>`
    : errorMessage('code-error', error)}
${resend}
${restartAction ? html`<form method="post" action="${restartAction}" class="alt">
${csrfField(input.csrf)}
<button type="submit" class="link">${t(locale, 'code.change_email')}</button>
</form>` : null}`;
  return renderPage({
    locale,
    title,
    main,
    serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.action, resendAction, restartAction),
  });
}
