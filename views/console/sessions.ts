/**
 * Where the person is signed in (`/console/sessions`): every service session
 * with its device in plain words, when it signed in and was last active, and
 * the sites signed in through it; "Sign out of this device", "Sign out
 * everywhere else" and "Sign out everywhere" (each of the last two after a
 * confirmation of its own). No place is shown: it would take an outside
 * service to guess one from an address.
 */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { accountBar, bdi, breadcrumbs, buttonForm, noticeBanner, path, timeTag, tx } from './parts.ts';
import { renderPage, type Page } from '../layout.ts';

export interface SessionView {
  /** The session's uid (not its cookie value). */
  id: string;
  /** The session this page is shown in. */
  current: boolean;
  /** Browser and system names from the User-Agent (proper nouns: Firefox, Windows, iPhone). */
  browser?: string | undefined;
  os?: string | undefined;
  firstSeenAt: number;
  lastSeenAt: number;
  expiresAt: number;
  sites: { clientId: string; name: string }[];
}

export type SessionsNotice = 'signed_out' | 'signed_out_others';

interface Common {
  locale: Locale;
  serviceName: string;
  csrf: string;
  accountEmail?: string | undefined;
}

/** "Firefox on Windows", with plain fallbacks when the User-Agent says little. */
function deviceName(locale: Locale, session: Pick<SessionView, 'browser' | 'os'>): string {
  return t(locale, 'console.sessions.device', {
    browser: session.browser ?? t(locale, 'console.sessions.unknown_browser'),
    os: session.os ?? t(locale, 'console.sessions.unknown_os'),
  });
}

/** The console's card that leads to this page. */
export function devicesCard(locale: Locale, serviceName: string): SafeHtml {
  return html`<section id="devices" class="card" aria-labelledby="devices-title">
<div class="section-head">
<h2 id="devices-title">${t(locale, 'console.devices.title')}</h2>
<p class="muted">${t(locale, 'console.devices.intro', { serviceName })}</p>
</div>
<a class="btn secondary" href="/console/sessions">${t(locale, 'console.devices.open')}</a>
</section>`;
}

function sessionItem(locale: Locale, csrf: string, session: SessionView, index: number): SafeHtml {
  const id = `session-${index}`;
  const action = session.current
    ? html`<a class="btn secondary" href="/session/end" aria-describedby="${id}">${t(locale, 'console.sessions.sign_out')}</a>`
    : buttonForm(path('/console/sessions/', session.id, '/end'), csrf, t(locale, 'console.sessions.sign_out'), 'btn danger-outline', id);
  return html`<li class="tile${session.current ? ' is-current' : ''}">
<div class="item-head">
<div class="item-name"><h3 id="${id}">${deviceName(locale, session)}</h3></div>
${session.current ? html`<span class="badge badge-accent">${t(locale, 'console.sessions.this_device')}</span>` : null}
</div>
<dl class="facts">
<div><dt>${t(locale, 'console.sessions.signed_in')}</dt><dd>${timeTag(locale, session.firstSeenAt)}</dd></div>
<div><dt>${t(locale, 'console.sessions.last_active')}</dt><dd>${timeTag(locale, session.lastSeenAt)}</dd></div>
<div><dt>${t(locale, 'console.sessions.expires')}</dt><dd>${timeTag(locale, session.expiresAt)}</dd></div>
</dl>
<p class="label">${t(locale, 'console.sessions.sites')}</p>
${session.sites.length === 0
    ? html`<p class="muted">${t(locale, 'console.sessions.no_sites')}</p>`
    : html`<ul class="chips">${session.sites.map((site) => html`<li class="chip">${bdi(site.name)}</li>`)}</ul>`}
<div class="item-foot">${action}</div>
</li>`;
}

export function sessionsPage(input: Common & { sessions: SessionView[]; notice?: SessionsNotice | undefined }): Page {
  const { locale, serviceName } = input;
  const title = t(locale, 'console.sessions.title');
  // This device first, then the most recently active.
  const sessions = [...input.sessions].sort((a, b) => Number(b.current) - Number(a.current) || b.lastSeenAt - a.lastSeenAt);
  const others = sessions.filter((s) => !s.current).length;
  const main = html`${breadcrumbs(locale, [{ href: '/console', label: html`${t(locale, 'console.title')}` }, { label: html`${title}` }])}
<div class="page-head">
<h1>${title}</h1>
<p class="lead">${t(locale, 'console.sessions.lead', { serviceName })}</p>
</div>
<section id="sessions" class="card" aria-labelledby="sessions-title">
<div class="section-head">
<h2 id="sessions-title">${t(locale, 'console.devices.title')} <span class="pill">${sessions.length}</span></h2>
</div>
${input.notice ? noticeBanner(t(locale, `console.notice.${input.notice}`)) : null}
<ul class="tiles">
${sessions.map((session, i) => sessionItem(locale, input.csrf, session, i))}
</ul>
<div class="section-foot">
${others > 0
    ? html`<a class="btn secondary" href="/console/sessions/end-others">${t(locale, 'console.sessions.end_others')}</a>`
    : html`<p class="muted">${t(locale, 'console.sessions.empty_others')}</p>`}
<a class="btn danger-outline" href="/console/sessions/end-all">${t(locale, 'console.sessions.end_all')}</a>
</div>
</section>
<p class="muted footnote">${t(locale, 'console.times_utc')}</p>`;
  return renderPage({ locale, title, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail) });
}

/** "Sign out everywhere else" or "Sign out everywhere": what happens, then one button. */
export function endSessionsConfirmPage(input: Common & { which: 'others' | 'all'; sessions: SessionView[] }): Page {
  const { locale, serviceName } = input;
  const key = input.which === 'all' ? 'end_all' : 'end_others';
  const title = t(locale, `console.${key}.title`);
  const ended = input.sessions.filter((s) => input.which === 'all' || !s.current);
  const main = html`<h1>${title}</h1>
<p class="lead">${tx(locale, `console.${key}.intro`, { serviceName })}</p>
<ul class="consequences">
${ended.map((s) => html`<li>${deviceName(locale, s)}${s.current ? html` <span class="badge badge-accent">${t(locale, 'console.sessions.this_device')}</span>` : null}</li>`)}
</ul>
<p>${t(locale, 'console.end_others.sites')}</p>
<p class="muted">${t(locale, input.which === 'all' ? 'console.end_all.here' : 'console.end_others.here')}</p>
<div class="actions">
${buttonForm(`/console/sessions/end-${input.which}`, input.csrf, t(locale, `console.${key}.submit`), 'danger')}
<a class="button secondary" href="/console/sessions">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountEmail) });
}
