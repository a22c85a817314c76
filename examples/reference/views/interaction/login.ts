import { csrfField, describedBy, errorMessage, fillHtml, formTargets, html, renderPage, t, type Locale, type Page, type SafeHtml } from '../../../../src/pages.ts';

/** The passkey way in, offered where the browser can do WebAuthn (the script unhides it). */
export type LoginPasskeys = {
  /** The script file (absolute URL on the service's origin). */
  script: string;
  /** Where the script asks for WebAuthn options (POST). */
  optionsAction: string;
  /** Where the signed answer goes (POST, field `response`). */
  action: string;
  /** The passkey-only sign-up page. */
  signUpHref: string;
  /** The RP ID, for the signal about a passkey the service does not know. */
  rpId: string;
  /** The credential a failed sign-in presented that nobody has: the browser is told to forget it. */
  unknownCredential?: string | undefined;
};

export type LoginPageInput = {
  locale: Locale;
  serviceName: string;
  clientName?: string;
  /** The address form's target; without it (a site asked for another way: strength.ts) no emailed code is offered. */
  action?: string | undefined;
  csrf: string;
  email?: string | undefined;
  error?: string | undefined;
  /** An error of another way in (a passkey, an upstream): above the ways, announced. */
  alert?: string | undefined;
  passkeys?: LoginPasskeys | undefined;
  /** Social sign-ins: "Continue with <name>", each a form of its own. */
  upstreams?: { name: string; action: string }[] | undefined;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
  /** The site asked for a certain strength: only the ways that reach it are offered, and the person may go back instead. */
  strength?: { cancelAction: string } | undefined;
};

/** "<site> asks you to sign in with one of the ways below"; on a page of passkeys only, what they need (shown without WebAuthn). */
function strengthNotice(input: LoginPageInput): SafeHtml | null {
  const { locale, strength } = input;
  if (!strength) return null;
  const clientName = input.clientName ?? input.serviceName;
  return html`<p class="lead" id="strength-notice">${t(locale, 'login.strength.notice', { clientName })}</p>
${input.passkeys && !input.action && !input.upstreams?.length ? html`<p class="error" data-nojs>${t(locale, 'login.strength.needs_javascript')}</p>` : null}`;
}

/** The way back for whoever cannot sign in any of those ways: the site is told so. */
function strengthCancel(input: LoginPageInput): SafeHtml | null {
  const { locale, strength } = input;
  if (!strength) return null;
  return html`<form method="post" action="${strength.cancelAction}">
${csrfField(input.csrf)}
<button type="submit" class="secondary">${t(locale, 'login.strength.cancel', { clientName: input.clientName ?? input.serviceName })}</button>
</form>`;
}

function otherWays(input: LoginPageInput): SafeHtml | null {
  const { locale, passkeys } = input;
  const upstreams = input.upstreams ?? [];
  if (!passkeys && upstreams.length === 0) return null;
  return html`${input.action ? html`<p class="or"${upstreams.length === 0 ? html` hidden data-passkey-hidden` : null}>${t(locale, 'login.or')}</p>` : null}
<div class="ways">
${passkeys ? html`<form id="passkey-signin" method="post" action="${passkeys.action}" data-options="${passkeys.optionsAction}" data-status="passkey-status" data-failed="${t(locale, 'passkey.error.cancelled')}"${input.alert || !input.action ? null : html` data-autofill`} data-rp="${passkeys.rpId}"${passkeys.unknownCredential ? html` data-unknown="${passkeys.unknownCredential}"` : null} hidden data-passkey-hidden>
${csrfField(input.csrf)}
<input type="hidden" name="response" value="">
<button type="submit" class="secondary">${t(locale, 'login.passkey')}</button>
</form>
<p id="passkey-status" class="error" role="alert" hidden></p>` : null}
${upstreams.map((u) => html`<form method="post" action="${u.action}">
${csrfField(input.csrf)}
<button type="submit" class="secondary">${t(locale, 'login.upstream', { name: u.name })}</button>
</form>`)}
</div>
${passkeys ? html`<p class="alt" hidden data-passkey-hidden><a href="${passkeys.signUpHref}">${t(locale, 'login.passkey_signup')}</a></p>` : null}`;
}

/**
 * The sign-in page: the address for an emailed code (works without
 * JavaScript), then the other ways in: a passkey (where the browser can:
 * the script shows it and offers passkeys in the address field's autofill,
 * except on a page that reports a failure, which would otherwise be retried
 * at once)
 * and each configured upstream. An error of one of the other ways is said at
 * the top, with every way still offered below it.
 */
export function loginPage(input: LoginPageInput): Page {
  const { locale, clientName, error, passkeys } = input;
  const title = t(locale, 'login.title');
  const main = html`<h1>${title}</h1>
${clientName ? html`<p class="lead">${fillHtml(t(locale, 'login.subtitle'), { clientName: html`<strong>${clientName}</strong>` })}</p>` : null}
${strengthNotice(input)}
${errorMessage('signin-error', input.alert)}
${input.action ? html`<p id="email-intro">${t(locale, 'login.intro')}</p>
<form method="post" action="${input.action}">
${csrfField(input.csrf)}
<div class="field">
<label for="email">${t(locale, 'login.email.label')}</label>
${errorMessage('email-error', error)}
<input id="email" name="email" type="email" autocomplete="${passkeys ? 'email webauthn' : 'email'}" autocapitalize="none" spellcheck="false" required value="${input.email ?? ''}"${describedBy(error && 'email-error', 'email-intro')}${error ? html` aria-invalid="true"` : null}>
</div>
<button type="submit" class="primary">${t(locale, 'login.submit')}</button>
</form>` : null}
${otherWays(input)}
${strengthCancel(input)}`;
  return renderPage({
    locale, title, main, serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.action, passkeys?.action, input.strength?.cancelAction, ...(input.upstreams ?? []).map((u) => u.action)),
    scriptFiles: passkeys ? [passkeys.script] : [],
  });
}
