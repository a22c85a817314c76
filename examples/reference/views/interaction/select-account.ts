import { decisionForm, fillHtml, formTargets, html, renderPage, t, type Locale, type Page } from '../../../../src/pages.ts';

export type SelectAccountPageInput = {
  locale: Locale;
  serviceName: string;
  accountEmail: string;
  csrf: string;
  /** Continues as the signed-in account. */
  action: string;
  /** The address form of this sign-in, for another account. */
  otherHref: string;
  formAction?: string[];
};

/** prompt=select_account: go on as the signed-in person, or sign in as someone else. */
export function selectAccountPage(input: SelectAccountPageInput): Page {
  const { locale, serviceName } = input;
  const title = t(locale, 'select.title');
  const main = html`<h1>${title}</h1>
<p class="lead">${fillHtml(t(locale, 'select.intro', { serviceName }), { email: html`<strong>${input.accountEmail}</strong>` })}</p>
<div class="actions">
${decisionForm(input.action, input.csrf, t(locale, 'select.continue', { email: input.accountEmail }), 'primary')}
<a class="button secondary" href="${input.otherHref}">${t(locale, 'select.other')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName, formAction: formTargets(input.formAction, input.action) });
}
