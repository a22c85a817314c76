/**
 * The person's console (issue 5): connected sites with Block site, senders
 * and their categories, the inbox, the language, and links to the
 * organizations the person administers. Server-rendered, no script at all:
 * every change is a plain form POST with the CSRF token, every confirmation
 * a GET page of its own.
 *
 * Everything a site wrote (its name, a message's title and body) and the
 * person's email are untrusted text: escaped by `html`, names isolated in
 * <bdi> so a right-to-left name cannot reorder the sentence around it, and a
 * message's title and body shown exactly as written (newlines kept by CSS,
 * never turned into links). A message's `url` (https only) is its one link.
 */
import { t } from '../src/i18n/index.ts';
import { html, raw } from '../src/text/html.ts';
import type { SafeHtml } from '../src/text/html.ts';
import type { ConsoleSection } from '../src/host.ts';
import { renderPage } from './layout.ts';
import { logoutLines } from './logouts.ts';
import type { Page } from './layout.ts';
import { inboxSection } from './console/inbox.ts';
import { accountBar, type ConsolePageInput } from './console/parts.ts';
import { sendersSection } from './console/senders.ts';
import { devicesCard } from './console/sessions.ts';
import { languageSection, orgsSection } from './console/settings.ts';
import { sitesSection } from './console/sites.ts';

// The pieces and types the other pages and the routes use (views/console/*).
export * from './console/parts.ts';
export { blockConfirmPage } from './console/sites.ts';

function pageNav(input: ConsolePageInput): SafeHtml {
  const { locale } = input;
  const { unread } = input.inbox;
  const entries: { id: string; label: string; pill?: SafeHtml }[] = [
    { id: 'sites', label: t(locale, 'console.sites.title'), pill: html`<span class="pill">${input.sites.length}</span>` },
    { id: 'senders', label: t(locale, 'console.senders.title') },
    {
      id: 'inbox',
      label: t(locale, 'console.inbox.title'),
      // The bare number is for the eye; a screen reader hears "(3 unread)".
      ...(unread > 0 ? { pill: html`<span class="pill" aria-hidden="true">${unread}</span><span class="visually-hidden">${t(locale, 'console.inbox.unread_count', { count: unread })}</span>` } : {}),
    },
    { id: 'devices', label: t(locale, 'console.devices.title') },
    { id: 'language', label: t(locale, 'console.language.title') },
    ...(input.adminOf.length > 0 ? [{ id: 'orgs', label: t(locale, 'console.orgs.title') }] : []),
    ...(input.extra ?? []).map((section) => ({ id: section.id, label: section.title })),
  ];
  return html`<nav class="toc" aria-label="${t(locale, 'console.nav.label')}">
<ul>
${entries.map((e) => html`<li><a href="#${e.id}">${e.label}${e.pill ? html` ${e.pill}` : null}</a></li>`)}
</ul>
</nav>`;
}

export function consolePage(input: ConsolePageInput): Page {
  const { locale, serviceName } = input;
  const title = t(locale, 'console.title');
  const main = html`<div class="page-head">
<h1>${title}</h1>
<p class="lead">${t(locale, 'console.lead')}</p>
</div>
${pageNav(input)}
${sitesSection(input)}
${logoutsSection(input)}
${sendersSection(input)}
${inboxSection(input)}
${devicesCard(locale, serviceName)}
${languageSection(input)}
${orgsSection(input)}
${(input.extra ?? []).map(hostSection)}
<p class="muted footnote">${t(locale, 'console.times_utc')}</p>`;
  const scriptFiles = [...new Set((input.extra ?? []).flatMap((s) => s.scripts ?? []))]
    .map((src) => new URL(src, input.issuer ?? 'http://localhost').href);
  const formAction = (input.extra ?? []).flatMap((s) => s.formAction ?? []);
  return renderPage({ locale, title, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail), scriptFiles, formAction });
}

/** Recent sign-outs at sites: which sites were told, which could not be reached (src/notify/backchannel-logout.ts). */
function logoutsSection(input: ConsolePageInput): SafeHtml | null {
  const lines = input.logouts ?? [];
  if (lines.length === 0) return null;
  return html`<section id="logouts" class="card" aria-labelledby="logouts-title">
<div class="section-head"><h2 id="logouts-title">${t(input.locale, 'logouts.console_title')}</h2></div>
${logoutLines(input.locale, lines, false)}
</section>`;
}

/** A section of the host's own: a card like the console's, its content the host's markup. */
function hostSection(section: ConsoleSection): SafeHtml {
  return html`<section id="${section.id}" class="card" aria-labelledby="${section.id}-title">
<div class="section-head"><h2 id="${section.id}-title">${section.title}</h2></div>
${raw(section.html)}
</section>`;
}
