import { csrfField, errorMessage, fillHtml, formTargets, html, renderPage, t, type Locale, type Page } from '../../../../src/pages.ts';

export type LinkFirstPageInput = {
  locale: Locale;
  serviceName: string;
  csrf: string;
  /** The upstream's configured name ("Continue with <name>"). */
  upstreamName: string;
  /** The address of the account here, where the code goes. */
  email: string;
  /** "Email me a code"; none when the site asked for another way of signing in. */
  codeAction?: string | undefined;
  /** "Cancel": back to the sign-in page, nothing linked. */
  cancelAction: string;
  /** A passkey of the account, where the browser can (the script shows it). */
  passkeys?: { script: string; rpId: string; optionsAction: string; action: string } | undefined;
  error?: string | undefined;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
};

/**
 * "This address already has an account here": an upstream sign-in whose
 * verified address is an account's links nothing and signs in nobody until
 * the person proves that account with the code emailed to it or one of its
 * passkeys (upstream-link-first.ts).
 */
export function linkFirstPage(input: LinkFirstPageInput): Page {
  const { locale, passkeys } = input;
  const title = t(locale, 'link_first.title');
  const main = html`<h1>${title}</h1>
<p id="link-intro">${fillHtml(t(locale, 'link_first.intro', { name: input.upstreamName }), { email: html`<strong>${input.email}</strong>` })}</p>
${errorMessage('link-error', input.error)}
${input.codeAction ? html`<form method="post" action="${input.codeAction}">
${csrfField(input.csrf)}
<button type="submit" class="primary">${t(locale, 'link_first.send_code')}</button>
</form>` : null}
${passkeys ? html`<form id="passkey-signin" method="post" action="${passkeys.action}" data-options="${passkeys.optionsAction}" data-status="passkey-status" data-failed="${t(locale, 'passkey.error.cancelled')}" data-rp="${passkeys.rpId}" hidden data-passkey-hidden>
${csrfField(input.csrf)}
<input type="hidden" name="response" value="">
<button type="submit" class="secondary">${t(locale, 'link_first.passkey')}</button>
</form>
<p id="passkey-status" class="error" role="alert" hidden></p>` : null}
<form method="post" action="${input.cancelAction}" class="alt">
${csrfField(input.csrf)}
<button type="submit" class="link">${t(locale, 'link_first.cancel')}</button>
</form>`;
  return renderPage({
    locale, title, main, serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.codeAction, passkeys?.action, input.cancelAction),
    scriptFiles: passkeys ? [passkeys.script] : [],
  });
}
