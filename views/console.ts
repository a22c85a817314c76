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
import { LOCALES, t } from '../src/i18n/index.ts';
import type { Locale, MessageKey } from '../src/i18n/index.ts';
import { fillHtml, html } from '../src/text/html.ts';
import type { HtmlValue, SafeHtml } from '../src/text/html.ts';
import { csrfField, renderPage } from './layout.ts';
import type { Page } from './layout.ts';
import type { Category } from './letters/notification.ts';

export type { Category } from './letters/notification.ts';
export type Delivery = 'account_and_email' | 'account' | 'off';

export interface ConsoleSiteView {
  clientId: string;
  /** client_name: untrusted text. */
  name: string;
  /** client_uri; linked only when https. */
  uri: string | null;
  /** logo_uri; shown only when https or a data: image, else a letter avatar. */
  logoUri: string | null;
  firstSignInAt: number;
  lastSignInAt: number;
  scopes: string[];
  offlineAccess: boolean;
  status: 'connected' | 'blocked';
  blockedAt?: number;
}

export interface ConsoleSenderView {
  clientId: string;
  name: string;
  logoUri: string | null;
  muted: boolean;
  categories: Record<Category, Delivery>;
}

export interface ConsoleMessageView {
  id: string;
  clientId: string;
  siteName: string;
  logoUri: string | null;
  category: Category;
  /** The site's words, verbatim (untrusted). */
  title: string;
  /** The site's words, verbatim (untrusted, may contain newlines). */
  body: string;
  /** The one link of the message; shown only when https. */
  url: string | null;
  receivedAt: number;
  read: boolean;
}

export type ConsoleNotice = 'blocked' | 'unblocked' | 'saved' | 'deleted' | 'read' | 'language';

export interface ConsolePageInput {
  locale: Locale;
  serviceName: string;
  accountEmail?: string | undefined;
  /** CSRF token: a hidden field `csrf` in every form. */
  csrf: string;
  sites: ConsoleSiteView[];
  /** Connected sites only (a blocked site is shown as blocked in Connected sites, not as a sender). */
  senders: ConsoleSenderView[];
  inbox: { items: ConsoleMessageView[]; unread: number; next: string | null; cursor: string | null };
  /** Organizations the person administers (links to their pages). */
  adminOf: { id: string; name: string }[];
  notice?: ConsoleNotice | undefined;
}

export const CATEGORIES: readonly Category[] = ['transactional', 'product', 'promotions'];
export const DELIVERIES: readonly Delivery[] = ['account_and_email', 'account', 'off'];

/** The language picker: each language named in itself. */
const LANGUAGE_NAMES: Readonly<Record<Locale, string>> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  ar: 'العربية',
};

const SCOPE_KEYS: Readonly<Record<string, MessageKey>> = {
  openid: 'console.scope.openid',
  email: 'console.scope.email',
  profile: 'console.scope.profile',
  offline_access: 'console.scope.offline_access',
};

/* ---------- Pieces shared with console-org.ts ---------- */

/** A translated sentence whose placeholders may be markup (escaped text otherwise). */
export function tx(locale: Locale, key: MessageKey, params: Readonly<Record<string, HtmlValue>>): SafeHtml {
  return fillHtml(t(locale, key), params);
}

/** Untrusted text inside our sentences, isolated so its direction cannot leak out. */
export function bdi(text: string): SafeHtml {
  return html`<bdi>${text}</bdi>`;
}

const DATE_TIME = new Map<Locale, Intl.DateTimeFormat>();

/** Date and time in the reader's language, UTC (the service does not know the reader's zone). */
export function formatDateTime(locale: Locale, at: number): string {
  let format = DATE_TIME.get(locale);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
    DATE_TIME.set(locale, format);
  }
  return format.format(at);
}

/** A <time> with the machine-readable instant; nothing for an invalid time. */
export function timeTag(locale: Locale, at: number): SafeHtml {
  const date = new Date(at);
  if (!Number.isFinite(at) || Number.isNaN(date.getTime())) return html`<span>—</span>`;
  return html`<time datetime="${date.toISOString()}">${formatDateTime(locale, at)}</time>`;
}

/** An https URL, normalised, or undefined. */
export function httpsUrl(value: string | null | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

// data: logos: images only, base64 or percent-encoded, nothing that could break out of the attribute once escaped.
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+(?:;[a-z0-9=.+-]+)*(?:;base64)?,[a-z0-9!$&'()*+,;=._~:@/?%-]*$/i;

/** The logo's src when it may be shown: https (normalised) or a data: image. */
export function logoSrc(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  if (DATA_IMAGE.test(value) && value.length <= 100_000) return value;
  return httpsUrl(value)?.href;
}

const AVATAR_COLOURS = 6;

function initial(locale: Locale, name: string): string {
  const cleaned = name.replace(/[\p{Cc}\p{Cf}\p{Z}\p{P}\p{S}]/gu, '');
  const first = new Intl.Segmenter(locale, { granularity: 'grapheme' }).segment(cleaned)[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase(locale);
}

function colourOf(key: string): number {
  let h = 0;
  for (const ch of key) h = (h * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  return h % AVATAR_COLOURS;
}

/**
 * The site's logo, decorative (its name is always written next to it), or a
 * letter avatar when the logo is missing or not an https/data URL.
 */
export function siteLogo(locale: Locale, site: { clientId: string; name: string; logoUri: string | null }, size: 'md' | 'sm' | 'lg' = 'md'): SafeHtml {
  const px = size === 'lg' ? 56 : size === 'sm' ? 32 : 44;
  const src = logoSrc(site.logoUri);
  if (src) {
    return html`<img class="logo logo-${size}" src="${src}" alt="" width="${px}" height="${px}" referrerpolicy="no-referrer" loading="lazy" decoding="async">`;
  }
  return html`<span class="logo logo-${size} avatar av-${colourOf(site.clientId)}" aria-hidden="true">${initial(locale, site.name)}</span>`;
}

/** Who is signed in, and the way out; in the header of every console page. */
export function accountBar(locale: Locale, accountEmail: string | undefined): SafeHtml {
  return html`<span class="account">${accountEmail
    ? html`<span class="who">${tx(locale, 'console.signed_in_as', { email: html`<strong>${bdi(accountEmail)}</strong>` })}</span>`
    : null}<a href="/session/end">${t(locale, 'console.sign_out')}</a></span>`;
}

/** A form that is one small button. */
export function buttonForm(action: string, csrf: string, label: HtmlValue, style: string, describedBy?: string): SafeHtml {
  return html`<form method="post" action="${action}">
${csrfField(csrf)}
<button type="submit" class="${style}"${describedBy ? html` aria-describedby="${describedBy}"` : null}>${label}</button>
</form>`;
}

/** The text "(opens in a new tab)", for screen readers only. */
function newTab(locale: Locale): SafeHtml {
  return html`<span class="visually-hidden"> ${t(locale, 'console.new_tab')}</span>`;
}

/** A route with its dynamic segments (odd positions) percent-encoded: `path('/a/', id, '/b')`. */
export function path(...parts: string[]): string {
  return parts.map((p, i) => (i % 2 === 1 ? encodeURIComponent(p) : p)).join('');
}

/* ---------- Connected sites ---------- */

function scopeList(locale: Locale, site: ConsoleSiteView): SafeHtml {
  const scopes = new Set(site.scopes.filter((s) => s !== 'offline_access'));
  if (site.offlineAccess || site.scopes.includes('offline_access')) scopes.add('offline_access');
  if (scopes.size === 0) return html`<p class="muted">${t(locale, 'console.sites.no_access')}</p>`;
  return html`<ul class="chips">${[...scopes].map((scope) => {
    const key = Object.hasOwn(SCOPE_KEYS, scope) ? SCOPE_KEYS[scope] : undefined;
    if (!key) return html`<li class="chip"><code>${scope}</code></li>`;
    return html`<li class="chip${scope === 'offline_access' ? ' chip-warn' : ''}">${t(locale, key)}</li>`;
  })}</ul>`;
}

function siteItem(locale: Locale, csrf: string, site: ConsoleSiteView, index: number): SafeHtml {
  const id = `site-${index}`;
  const uri = httpsUrl(site.uri);
  const blocked = site.status === 'blocked';
  const name = uri
    ? html`<a href="${uri.href}" rel="noopener noreferrer" target="_blank">${bdi(site.name)}${newTab(locale)}</a>`
    : bdi(site.name);
  const action = blocked
    ? html`<div class="item-foot">
<p class="blocked-on">${tx(locale, 'console.sites.blocked_on', { date: site.blockedAt === undefined ? '—' : timeTag(locale, site.blockedAt) })}</p>
${buttonForm(path('/console/sites/', site.clientId, '/unblock'), csrf, tx(locale, 'console.sites.unblock', { siteName: bdi(site.name) }), 'btn secondary')}
</div>`
    : html`<div class="item-foot">
<a class="btn danger-outline" href="${path('/console/sites/', site.clientId, '/block')}"><span>${tx(locale, 'console.sites.block', { siteName: bdi(site.name) })}</span></a>
</div>`;
  return html`<li class="tile${blocked ? ' is-blocked' : ''}">
<div class="item-head">
${siteLogo(locale, site)}
<div class="item-name">
<h3 id="${id}">${name}</h3>
${uri ? html`<p class="host">${uri.host}</p>` : null}
</div>
${blocked
    ? html`<span class="badge badge-danger">${t(locale, 'console.sites.blocked')}</span>`
    : html`<span class="badge badge-ok">${t(locale, 'console.sites.connected')}</span>`}
</div>
<dl class="facts">
<div><dt>${t(locale, 'console.sites.first')}</dt><dd>${timeTag(locale, site.firstSignInAt)}</dd></div>
<div><dt>${t(locale, 'console.sites.last')}</dt><dd>${timeTag(locale, site.lastSignInAt)}</dd></div>
</dl>
<p class="label">${t(locale, 'console.sites.access')}</p>
${scopeList(locale, site)}
${action}
</li>`;
}

function sitesSection(input: ConsolePageInput): SafeHtml {
  const { locale, serviceName } = input;
  return html`<section id="sites" class="card" aria-labelledby="sites-title">
<div class="section-head">
<h2 id="sites-title">${t(locale, 'console.sites.title')}</h2>
<p class="muted">${t(locale, 'console.sites.intro', { serviceName })}</p>
</div>
${input.sites.length === 0
    ? html`<p class="empty">${t(locale, 'console.sites.empty', { serviceName })}</p>`
    : html`<ul class="tiles">
${input.sites.map((site, i) => siteItem(locale, input.csrf, site, i))}
</ul>`}
</section>`;
}

/* ---------- Senders ---------- */

function senderItem(locale: Locale, csrf: string, sender: ConsoleSenderView, index: number): SafeHtml {
  const id = `sender-${index}`;
  return html`<li class="sender${sender.muted ? ' is-muted' : ''}">
<form method="post" action="${path('/console/senders/', sender.clientId)}">
${csrfField(csrf)}
<div class="item-head">
${siteLogo(locale, sender)}
<div class="item-name"><h3 id="${id}">${bdi(sender.name)}</h3></div>
${sender.muted ? html`<span class="badge badge-muted">${t(locale, 'console.senders.muted')}</span>` : null}
</div>
<div class="check">
<input type="checkbox" id="${id}-muted" name="muted" value="on"${sender.muted ? html` checked` : null} aria-describedby="${id}-muted-hint">
<label for="${id}-muted">${tx(locale, 'console.senders.mute', { siteName: bdi(sender.name) })}</label>
</div>
<p id="${id}-muted-hint" class="hint check-hint">${t(locale, 'console.senders.muted_hint')}</p>
<div class="categories">
${CATEGORIES.map((category) => html`<fieldset>
<legend>${t(locale, `category.${category}`)}</legend>
${DELIVERIES.map((delivery) => {
    const inputId = `${id}-${category}-${delivery}`;
    return html`<div class="radio">
<input type="radio" id="${inputId}" name="${category}" value="${delivery}"${sender.categories[category] === delivery ? html` checked` : null}>
<label for="${inputId}">${t(locale, `console.delivery.${delivery}`)}</label>
</div>`;
  })}
</fieldset>`)}
</div>
<div class="form-foot"><button type="submit" class="btn primary" aria-describedby="${id}">${t(locale, 'console.save')}</button></div>
</form>
</li>`;
}

function sendersSection(input: ConsolePageInput): SafeHtml {
  const { locale } = input;
  return html`<section id="senders" class="card" aria-labelledby="senders-title">
<div class="section-head">
<h2 id="senders-title">${t(locale, 'console.senders.title')}</h2>
<p class="muted">${t(locale, 'console.senders.intro')}</p>
</div>
${input.senders.length === 0
    ? html`<p class="empty">${t(locale, 'console.senders.empty')}</p>`
    : html`<ul class="senders">
${input.senders.map((sender, i) => senderItem(locale, input.csrf, sender, i))}
</ul>`}
</section>`;
}

/* ---------- Inbox ---------- */

/** The site's words with newlines normalised; shown with white-space: pre-wrap. */
function verbatim(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

function messageItem(locale: Locale, csrf: string, message: ConsoleMessageView, index: number): SafeHtml {
  const id = `msg-${index}`;
  const url = httpsUrl(message.url);
  const base = path('/console/inbox/', message.id);
  return html`<li class="message${message.read ? '' : ' is-unread'}">
<article aria-labelledby="${id}">
<div class="message-meta">
${siteLogo(locale, { clientId: message.clientId, name: message.siteName, logoUri: message.logoUri }, 'sm')}
<span class="site-name">${bdi(message.siteName)}</span>
<span class="badge badge-neutral">${t(locale, `category.${message.category}`)}</span>
${timeTag(locale, message.receivedAt)}
${message.read ? null : html`<span class="badge badge-unread">${t(locale, 'console.inbox.unread')}</span>`}
</div>
<h3 id="${id}" class="message-title" dir="auto">${verbatim(message.title)}</h3>
<p class="message-body" dir="auto">${verbatim(message.body)}</p>
<div class="message-actions">
${url ? html`<a class="btn primary" href="${url.href}" rel="noopener noreferrer" target="_blank"><span>${tx(locale, 'console.inbox.open', { siteName: bdi(message.siteName) })}${newTab(locale)}</span></a>` : null}
${message.read ? null : buttonForm(`${base}/read`, csrf, t(locale, 'console.inbox.mark_read'), 'btn secondary', id)}
${buttonForm(`${base}/delete`, csrf, t(locale, 'console.inbox.delete'), 'btn danger-quiet', id)}
</div>
</article>
</li>`;
}

function inboxSection(input: ConsolePageInput): SafeHtml {
  const { locale, inbox } = input;
  const heading = inbox.unread > 0
    ? html`${t(locale, 'console.inbox.title')} <span class="count">${t(locale, 'console.inbox.unread_count', { count: inbox.unread })}</span>`
    : html`${t(locale, 'console.inbox.title')}`;
  const pager = inbox.next || inbox.cursor
    ? html`<nav class="pager" aria-label="${t(locale, 'console.inbox.pages')}">
${inbox.cursor ? html`<a class="btn secondary newest" href="/console#inbox">${t(locale, 'console.inbox.newest')}</a>` : null}
${inbox.next ? html`<a class="btn secondary older" href="/console?cursor=${encodeURIComponent(inbox.next)}#inbox">${t(locale, 'console.inbox.older')}</a>` : null}
</nav>`
    : null;
  return html`<section id="inbox" class="card" aria-labelledby="inbox-title">
<div class="section-head">
<h2 id="inbox-title">${heading}</h2>
<p class="muted">${t(locale, 'console.inbox.intro')}</p>
</div>
${inbox.items.length === 0
    ? html`<p class="empty">${t(locale, inbox.cursor ? 'console.inbox.empty_page' : 'console.inbox.empty')}</p>`
    : html`<ul class="messages">
${[...inbox.items].sort((a, b) => b.receivedAt - a.receivedAt).map((m, i) => messageItem(locale, input.csrf, m, i))}
</ul>`}
${pager}
</section>`;
}

/* ---------- Language and organizations ---------- */

function languageSection(input: ConsolePageInput): SafeHtml {
  const { locale } = input;
  return html`<section id="language" class="card" aria-labelledby="language-title">
<div class="section-head">
<h2 id="language-title">${t(locale, 'console.language.title')}</h2>
<p class="muted" id="language-hint">${t(locale, 'console.language.intro')}</p>
</div>
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

function orgsSection(input: ConsolePageInput): SafeHtml | null {
  const { locale } = input;
  if (input.adminOf.length === 0) return null;
  return html`<section id="orgs" class="card" aria-labelledby="orgs-title">
<div class="section-head">
<h2 id="orgs-title">${t(locale, 'console.orgs.title')}</h2>
<p class="muted">${t(locale, 'console.orgs.intro')}</p>
</div>
<ul class="links">
${input.adminOf.map((org) => html`<li><a href="${path('/console/orgs/', org.id)}">${bdi(org.name)}</a></li>`)}
</ul>
</section>`;
}

/* ---------- Pages ---------- */

function noticeKey(notice: ConsoleNotice): MessageKey {
  return `console.notice.${notice}`;
}

export function noticeBanner(message: string | undefined): SafeHtml | null {
  return message ? html`<p class="notice" role="status">${message}</p>` : null;
}

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
    { id: 'language', label: t(locale, 'console.language.title') },
    ...(input.adminOf.length > 0 ? [{ id: 'orgs', label: t(locale, 'console.orgs.title') }] : []),
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
${noticeBanner(input.notice ? t(locale, noticeKey(input.notice)) : undefined)}
${pageNav(input)}
${sitesSection(input)}
${sendersSection(input)}
${inboxSection(input)}
${languageSection(input)}
${orgsSection(input)}
<p class="muted footnote">${t(locale, 'console.times_utc')}</p>`;
  return renderPage({ locale, title, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail) });
}

export function blockConfirmPage(input: {
  locale: Locale;
  serviceName: string;
  csrf: string;
  site: ConsoleSiteView;
  /** Optional: shown in the header when known. */
  accountEmail?: string | undefined;
}): Page {
  const { locale, serviceName, site } = input;
  const siteName = bdi(site.name);
  const title = t(locale, 'console.block.title', { siteName: site.name });
  const main = html`<div class="confirm-head">
${siteLogo(locale, site, 'lg')}
<h1>${tx(locale, 'console.block.title', { siteName })}</h1>
</div>
<p class="lead">${tx(locale, 'console.block.intro', { siteName })}</p>
<ul class="consequences">
<li>${tx(locale, 'console.block.access', { siteName })}</li>
<li>${tx(locale, 'console.block.signin', { siteName })}</li>
<li>${tx(locale, 'console.block.messages', { siteName })}</li>
<li>${tx(locale, 'console.block.ask', { siteName })}</li>
</ul>
<p class="muted">${tx(locale, 'console.block.undo', { siteName })}</p>
<div class="actions">
${buttonForm(path('/console/sites/', site.clientId, '/block'), input.csrf, tx(locale, 'console.block.submit', { siteName }), 'danger')}
<a class="button secondary" href="/console#sites">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountEmail) });
}
