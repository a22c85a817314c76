/**
 * The page before a fresh sign-in (`/console/sign-in-again`): what the person
 * asked for needs a recent sign-in, why, and the way on. "Sign in again" is a
 * link to the console's own authorization request (`max_age=0`); Cancel goes
 * back to the page of the action. Nothing on it acts: no script, no form.
 */
import { t, type Locale, type MessageKey } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import { renderPage, type Page } from '../layout.ts';
import { accountBar } from './parts.ts';

export interface SignInAgainInput {
  locale: Locale;
  serviceName: string;
  accountEmail?: string | undefined;
  /** The action's sentence: `reauth.why.<action>`. */
  why: MessageKey;
  /** Why a recent sign-in: `reauth.explain` (it adds a way in), or the action's own. */
  explain?: MessageKey | undefined;
  /** The console's authorization request with `max_age=0`. */
  signInUrl: string;
  /** The page of the action (a console path, checked by the caller). */
  back: string;
}

export function signInAgainPage(input: SignInAgainInput): Page {
  const { locale } = input;
  const title = t(locale, 'reauth.title');
  const main = html`<h1>${title}</h1>
<p class="lead">${t(locale, input.why)}</p>
<p class="muted">${t(locale, input.explain ?? 'reauth.explain')}</p>
<div class="actions">
<a class="button primary" href="${input.signInUrl}">${t(locale, 'reauth.submit')}</a>
<a class="button secondary" href="${input.back}">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName: input.serviceName, headerAside: accountBar(locale, input.accountEmail) });
}
