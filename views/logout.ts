import { t, type Locale } from '../src/i18n/index.ts';
import { fillHtml, html } from '../src/text/html.ts';
import { formTargets, renderPage, type Page } from './layout.ts';
import { logoutLines, type LogoutLine } from './logouts.ts';

export type LogoutPageInput = {
  locale: Locale;
  serviceName: string;
  /** oidc-provider's end_session_confirm URL and its xsrf secret. */
  action: string;
  xsrf: string;
  accountEmail?: string;
  /** The site that sent the person here, when known. */
  clientName?: string;
  /** Where the sign-out may end: the site's post_logout_redirect_uri (registered: the pre-step removed any other). */
  returnAddress?: string | undefined;
};

// Submits the sign-out form as soon as the page loads; allowed by its hash.
const AUTO_SUBMIT = "document.getElementById('signout').submit();";

/**
 * The confirmation page: who is signed in, which site asked, and what each
 * button really does. One form, two buttons; works without JavaScript.
 */
export function logoutPage(input: LogoutPageInput): Page {
  const { locale, serviceName, clientName } = input;
  const title = t(locale, 'logout.title', { serviceName });
  const main = html`<h1>${title}</h1>
${input.accountEmail ? html`<p class="lead">${fillHtml(t(locale, 'logout.account'), { email: html`<strong>${input.accountEmail}</strong>` })}</p>` : null}
${clientName ? html`<p>${t(locale, 'logout.site_asked', { clientName })}</p>` : null}
<ul class="list">
<li>${t(locale, 'logout.explain_signout', { serviceName })}</li>
<li>${clientName ? t(locale, 'logout.explain_stay_site', { serviceName, clientName }) : t(locale, 'logout.explain_stay', { serviceName })}</li>
</ul>
<form method="post" action="${input.action}">
<input type="hidden" name="xsrf" value="${input.xsrf}">
<div class="actions">
<button type="submit" name="logout" value="yes" class="primary">${t(locale, 'logout.signout')}</button>
<button type="submit" class="secondary">${t(locale, 'logout.stay')}</button>
</div>
</form>`;
  return renderPage({ locale, title, main, serviceName, formAction: formTargets(undefined, input.action, input.returnAddress) });
}

/**
 * The id_token_hint matched the signed-in person and session: no question is
 * asked. The form submits itself; without JavaScript one button continues.
 */
export function autoLogoutPage(input: LogoutPageInput): Page {
  const { locale, serviceName } = input;
  const title = t(locale, 'logout.auto');
  const main = html`<h1>${title}</h1>
<form id="signout" method="post" action="${input.action}">
<input type="hidden" name="xsrf" value="${input.xsrf}">
<input type="hidden" name="logout" value="yes">
<noscript><button type="submit" class="primary">${t(locale, 'logout.continue')}</button></noscript>
</form>`;
  return renderPage({ locale, title, main, serviceName, formAction: formTargets(undefined, input.action, input.returnAddress), scripts: [AUTO_SUBMIT] });
}

export type SignedOutPageInput = {
  locale: Locale;
  serviceName: string;
  clientName?: string;
  /** The site's post_logout_redirect_uri was not registered, so it was not used. */
  returnRejected: boolean;
  /** Each site's back-channel logout of this sign-out. */
  logouts?: readonly LogoutLine[];
};

export function signedOutPage(input: SignedOutPageInput): Page {
  const { locale, serviceName, clientName } = input;
  const title = t(locale, 'signedout.title');
  const main = html`<h1>${title}</h1>
<p class="lead">${t(locale, 'signedout.body', { serviceName })}</p>
${input.returnRejected ? html`<p class="error" role="status">${t(locale, 'signedout.rejected')}</p>` : null}
${clientName ? html`<p>${t(locale, 'signedout.site', { clientName })}</p>` : null}
${logoutLines(locale, input.logouts ?? [])}`;
  return renderPage({ locale, title, main, serviceName });
}

export type StayedPageInput = {
  locale: Locale;
  serviceName: string;
  /** The site that asked to sign the person out, when known. */
  clientName?: string | undefined;
  /** The site's registered return address (with its state), when it gave one. */
  returnTo?: string | undefined;
  consoleUrl: string;
  /** The asking site's back-channel logout. */
  logouts?: readonly LogoutLine[];
};

/**
 * After "Stay signed in": the person is still signed in to the service; the
 * site that asked was signed out, as the confirmation page said. Ways on:
 * back to the site (its registered return address) and the console.
 */
export function stayedPage(input: StayedPageInput): Page {
  const { locale, serviceName, clientName } = input;
  const title = t(locale, 'stayed.title');
  const main = html`<h1>${title}</h1>
<p class="lead">${t(locale, 'stayed.body', { serviceName })}</p>
${clientName ? html`<p>${t(locale, 'stayed.site', { clientName })}</p>` : null}
${logoutLines(locale, input.logouts ?? [])}
<div class="actions">
${input.returnTo && clientName ? html`<a class="button primary" href="${input.returnTo}">${t(locale, 'stayed.back', { clientName })}</a>` : null}
<a class="button secondary" href="${input.consoleUrl}">${t(locale, 'stayed.console')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName });
}
