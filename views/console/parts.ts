/**
 * What the console's sections and pages share: the views' input types, the
 * categories and deliveries, translated sentences with markup, isolated
 * untrusted names, times, logos, the small forms, and the notices shown in
 * the section that changed.
 */
import { t } from '../../src/i18n/index.ts';
import type { Locale, MessageKey } from '../../src/i18n/index.ts';
import { fillHtml, html } from '../../src/text/html.ts';
import type { HtmlValue, SafeHtml } from '../../src/text/html.ts';
import type { ConsoleSection } from '../../src/host.ts';
import { csrfField } from '../layout.ts';
import type { Category } from '../letters/notification.ts';
import type { LogoutLine } from '../logouts.ts';

export type { Category } from '../letters/notification.ts';
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
  /**
   * `removed`: an organization that owns the site removed the person (no
   * Block, no sender settings). `access_removed`: the person removed its
   * access (or the service ended it: `endedByServiceAt`); it asks for
   * consent at the next sign-in.
   */
  status: 'connected' | 'blocked' | 'access_removed' | 'removed';
  blockedAt?: number;
  accessRemovedAt?: number;
  /** When the service ended its access (the operator's endSiteAccess or endAccountAccess). */
  endedByServiceAt?: number;
  /** The last time the site used its access (refresh, code exchange, userinfo, introspection). */
  lastUsedAt?: number;
  /** The organization that removed the person (status `removed`). */
  removedBy?: string;
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
  /** `service`: the service's own notice (about the site `clientId`); `siteName` is then the service's. */
  from?: 'service';
  /** Which of the service's notices (`theft`, `new_browser`, `passkey_added`, ...); only with `from: 'service'`. */
  notice?: string;
  siteName: string;
  logoUri: string | null;
  category: Category | 'security';
  /** The site's words, verbatim (untrusted). */
  title: string;
  /** The site's words, verbatim (untrusted, may contain newlines). */
  body: string;
  /** The one link of the message; shown only when https. */
  url: string | null;
  receivedAt: number;
  read: boolean;
}

export type ConsoleNotice = 'blocked' | 'unblocked' | 'saved' | 'deleted' | 'read' | 'language' | 'access_removed' | 'all_access_removed';

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
  /** Organizations the person belongs to (links to their pages): administrators see the members, members the sites. */
  adminOf: { id: string; name: string; admin?: boolean; removed?: boolean }[];
  notice?: ConsoleNotice | undefined;
  /** The host's own sections, after the plugin's (src/console/sections.ts). */
  extra?: ConsoleSection[] | undefined;
  /** The service's base address: the host sections' script paths are resolved against it. */
  issuer?: string | undefined;
  /** Each site's back-channel logout of the last week (one line per site, its latest outcome). */
  logouts?: LogoutLine[] | undefined;
}

export const CATEGORIES: readonly Category[] = ['transactional', 'product', 'promotions'];
export const DELIVERIES: readonly Delivery[] = ['account_and_email', 'account', 'off'];

/** The language picker: each language named in itself. */
export const LANGUAGE_NAMES: Readonly<Record<Locale, string>> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  ar: 'العربية',
};

export const SCOPE_KEYS: Readonly<Record<string, MessageKey>> = {
  openid: 'console.scope.openid',
  email: 'console.scope.email',
  profile: 'console.scope.profile',
  offline_access: 'console.scope.offline_access',
};


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
function logoSrc(value: string | null | undefined): string | undefined {
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
export function newTab(locale: Locale): SafeHtml {
  return html`<span class="visually-hidden"> ${t(locale, 'console.new_tab')}</span>`;
}

/** A host name with a line-break opportunity after each dot, so a long one wraps between its labels. */
export function breakableHost(host: string): SafeHtml {
  return html`${host.split('.').map((label, i) => (i === 0 ? html`${label}` : html`.<wbr>${label}`))}`;
}

/** A route with its dynamic segments (odd positions) percent-encoded: `path('/a/', id, '/b')`. */
export function path(...parts: string[]): string {
  return parts.map((p, i) => (i % 2 === 1 ? encodeURIComponent(p) : p)).join('');
}

function noticeKey(notice: ConsoleNotice): MessageKey {
  return `console.notice.${notice}`;
}

/**
 * The confirmation of an action, where the person's eyes are: inside the
 * section that changed, and the target of the page's address (#notice), so
 * the browser scrolls to it and screen readers start there; a polite status.
 */
export function noticeBanner(message: string | undefined): SafeHtml | null {
  return message ? html`<p id="notice" class="notice" role="status" tabindex="-1">${message}</p>` : null;
}

/** The section each notice belongs to. */
const NOTICE_SECTION: Readonly<Record<ConsoleNotice, string>> = {
  blocked: 'sites', unblocked: 'sites', access_removed: 'sites', all_access_removed: 'sites', saved: 'senders', deleted: 'inbox', read: 'inbox', language: 'language',
};

/** The notice of the action that changed `section`, if that was the last action. */
export function sectionNotice(input: ConsolePageInput, section: string): SafeHtml | null {
  if (!input.notice || NOTICE_SECTION[input.notice] !== section) return null;
  return noticeBanner(t(input.locale, noticeKey(input.notice)));
}

/** Why a site has no access: the person removed it, or the service ended it; both ask for consent at the next sign-in. */
export function accessRemovedLine(locale: Locale, site: Pick<ConsoleSiteView, 'accessRemovedAt' | 'endedByServiceAt'>): SafeHtml {
  const key = site.endedByServiceAt !== undefined ? 'console.sites.ended_by_service_on' : 'console.sites.access_removed_on';
  return html`<p class="blocked-on">${tx(locale, key, { date: site.accessRemovedAt === undefined ? '—' : timeTag(locale, site.accessRemovedAt) })}</p>`;
}

/** Where this page stands in the console, for the pages below its front page. */
export function breadcrumbs(locale: Locale, trail: { href?: string; label: SafeHtml }[]): SafeHtml {
  return html`<nav class="crumbs" aria-label="${t(locale, 'console.breadcrumbs')}">
<ol>
${trail.map((step) => (step.href
    ? html`<li><a href="${step.href}">${step.label}</a></li>`
    : html`<li><span aria-current="page">${step.label}</span></li>`))}
</ol>
</nav>`;
}
