/** The language of the console and the letters, and the organizations the person is in. */
import { LOCALES, t } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { csrfField } from '../layout.ts';
import { bdi, LANGUAGE_NAMES, path, sectionNotice, type ConsolePageInput } from './parts.ts';

export function languageSection(input: ConsolePageInput): SafeHtml {
  const { locale } = input;
  return html`<section id="language" class="card" aria-labelledby="language-title">
<div class="section-head">
<h2 id="language-title">${t(locale, 'console.language.title')}</h2>
<p class="muted" id="language-hint">${t(locale, 'console.language.intro')}</p>
</div>
${sectionNotice(input, 'language')}
<form method="post" action="/console/language" class="inline-form">
${csrfField(input.csrf)}
<div class="select-field">
<label for="locale">${t(locale, 'console.language.label')}</label>
<select id="locale" name="locale" aria-describedby="language-hint">
${LOCALES.map((l) => html`<option value="${l}" lang="${l}"${l === locale ? html` selected` : null}>${LANGUAGE_NAMES[l]}</option>`)}
</select>
</div>
<button type="submit" class="btn primary">${t(locale, 'console.save')}</button>
</form>
</section>`;
}

export function orgsSection(input: ConsolePageInput): SafeHtml | null {
  const { locale } = input;
  if (input.adminOf.length === 0) return null;
  return html`<section id="orgs" class="card" aria-labelledby="orgs-title">
<div class="section-head">
<h2 id="orgs-title">${t(locale, 'console.orgs.title')}</h2>
<p class="muted">${t(locale, 'console.orgs.intro')}</p>
</div>
<ul class="links">
${input.adminOf.map((org) => html`<li><a href="${path('/console/orgs/', org.id)}"><span>${bdi(org.name)}</span> <span class="badge ${org.removed ? 'badge-danger' : org.admin === false ? 'badge-neutral' : 'badge-accent'}">${t(locale, org.removed ? 'console.org.removed' : org.admin === false ? 'console.org.role_member' : 'console.org.role_admin')}</span></a></li>`)}
</ul>
</section>`;
}
