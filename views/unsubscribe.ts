import { t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html } from '../src/text/html.ts';
import type { SafeHtml } from '../src/text/html.ts';
import { renderPage } from './layout.ts';
import type { Page } from './layout.ts';
import type { Category } from './letters/notification.ts';

export type UnsubscribeState =
  /** GET: nothing changed yet; one button "Unsubscribe from these emails" (POST). */
  | { kind: 'confirm' }
  /** After a POST. */
  | { kind: 'done'; did: 'email_off' | 'category_off' | 'muted' }
  /** Bad or expired token. */
  | { kind: 'invalid' };

export interface UnsubscribePageInput {
  locale: Locale;
  serviceName: string;
  /** The client's client_name (untrusted; escaped). Not shown on the invalid page. */
  siteName: string;
  /** Not shown on the invalid page. */
  category: Category;
  /** POST URL, the token in it. The forms post the field `do`: 'email_off' | 'category_off' | 'mute'. */
  action: string;
  consoleUrl: string;
  state: UnsubscribeState;
}

type Do = 'email_off' | 'category_off' | 'mute';

/**
 * A form that is one button. No CSRF field: the secret, signed token in the
 * action URL is the proof (the same URL is the RFC 8058 one-click target, which
 * carries nothing else), and all a forged POST could do is what the token
 * already allows: stop this site's emails of this category for this person.
 */
function doForm(action: string, value: Do, label: string, style: 'primary' | 'secondary'): SafeHtml {
  return html`<form method="post" action="${action}">
<input type="hidden" name="do" value="${value}">
<button type="submit" class="${style}">${label}</button>
</form>`;
}

function consoleLink(locale: Locale, consoleUrl: string): SafeHtml {
  return html`<p class="alt"><a href="${consoleUrl}">${t(locale, 'notify.manage')}</a></p>`;
}

/**
 * The pages behind a letter's unsubscribe link. A GET only asks (mail
 * scanners follow links, so it must change nothing); a POST stops the emails
 * and then offers the two stronger choices, each explained. Works without
 * JavaScript; every text in the reader's language.
 */
export function unsubscribePage(input: UnsubscribePageInput): Page {
  const { locale, serviceName, siteName, action, consoleUrl, state } = input;
  const category = t(locale, `category.${input.category}`);
  let title: string;
  let main: SafeHtml;
  let forms = true;

  if (state.kind === 'confirm') {
    title = t(locale, 'unsubscribe.confirm.title', { siteName, category });
    main = html`<h1>${title}</h1>
<p class="lead">${t(locale, 'unsubscribe.confirm.nothing_yet')}</p>
<p>${t(locale, 'unsubscribe.confirm.explain', { siteName, serviceName })}</p>
${doForm(action, 'email_off', t(locale, 'notify.stop'), 'primary')}
${consoleLink(locale, consoleUrl)}`;
  } else if (state.kind === 'done' && state.did === 'email_off') {
    title = t(locale, 'unsubscribe.email_off.title');
    main = html`<h1>${title}</h1>
<p class="lead">${t(locale, 'unsubscribe.email_off.body', { siteName, serviceName })}</p>
<h2>${t(locale, 'unsubscribe.more', { siteName })}</h2>
<div class="field">
<p>${t(locale, 'unsubscribe.category_off.explain', { siteName, category })}</p>
${doForm(action, 'category_off', t(locale, 'unsubscribe.category_off.submit'), 'secondary')}
</div>
<div class="field">
<p>${t(locale, 'unsubscribe.mute.explain', { siteName })}</p>
${doForm(action, 'mute', t(locale, 'unsubscribe.mute.submit', { siteName }), 'secondary')}
</div>
<p class="muted">${t(locale, 'unsubscribe.undo')}</p>
${consoleLink(locale, consoleUrl)}`;
  } else if (state.kind === 'done') {
    const key = state.did === 'category_off' ? 'category_off' : 'muted';
    title = t(locale, `unsubscribe.${key}.title`, { siteName });
    forms = false;
    main = html`<h1>${title}</h1>
<p class="lead">${t(locale, `unsubscribe.${key}.body`, { siteName, category, serviceName })}</p>
<p class="muted">${t(locale, 'unsubscribe.undo')}</p>
${consoleLink(locale, consoleUrl)}`;
  } else {
    title = t(locale, 'unsubscribe.invalid.title');
    forms = false;
    main = html`<h1>${title}</h1>
<p class="lead">${t(locale, 'unsubscribe.invalid.body')}</p>
${consoleLink(locale, consoleUrl)}`;
  }

  return renderPage({ locale, title, main, serviceName, formAction: forms ? [action] : [] });
}
