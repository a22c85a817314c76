/**
 * A connected site's own page (`/console/sites/:clientId`): who runs it, from
 * its registered metadata; what it can access, in plain words; what it may
 * send and how the person set it; when they signed in and when it last used
 * its access; and the two actions, Remove access and Block. Also the
 * confirmations of Remove access, for one site and for all.
 *
 * The metadata is the site's own text: escaped, names isolated in <bdi>, and
 * its addresses linked only when they are https and on one of the site's own
 * registered hosts (its client_uri and redirect_uris); others are shown as
 * text.
 */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import {
  accessRemovedLine, accountBar, bdi, breadcrumbs, breakableHost, buttonForm, CATEGORIES, httpsUrl, newTab, noticeBanner, path, SCOPE_KEYS,
  siteLogo, timeTag, tx, type ConsoleSiteView, type Delivery,
} from './parts.ts';
import { renderPage, type Page } from '../layout.ts';
import type { Category } from '../letters/notification.ts';
import { lastUsedFact, removeAccessLink } from './site-actions.ts';

export interface SiteDetailView extends ConsoleSiteView {
  /** policy_uri and tos_uri as registered (untrusted). */
  policyUri: string | null;
  tosUri: string | null;
  /** The site's own hosts (client_uri and redirect_uris): the only ones linked. */
  ownHosts: readonly string[];
  /** The person's settings for its messages; null when it may not write to them now. */
  messages: { muted: boolean; categories: Record<Category, Delivery> } | null;
}

interface Common {
  locale: Locale;
  serviceName: string;
  csrf: string;
  accountEmail?: string | undefined;
}

export type SiteDetailNotice = 'access_removed' | 'unblocked';

/** An address of the site's, linked only when https on one of its own hosts. */
export function ownLink(value: string | null | undefined, hosts: readonly string[]): URL | undefined {
  const url = httpsUrl(value);
  return url && hosts.includes(url.host) ? url : undefined;
}

function address(locale: Locale, value: string | null, hosts: readonly string[], label: string): SafeHtml {
  if (!value) return html`<span class="muted">${t(locale, 'console.site.not_given')}</span>`;
  const url = ownLink(value, hosts);
  if (url) {
    return html`<a href="${url.href}" rel="noopener noreferrer" target="_blank">${label}<span class="visually-hidden"> (${url.host})</span>${newTab(locale)}</a>`;
  }
  return html`<span class="unlinked"><bdi dir="ltr">${value}</bdi></span> <span class="muted">${t(locale, 'console.site.unlinked')}</span>`;
}

function crumbs(locale: Locale, site: ConsoleSiteView, here?: string): SafeHtml {
  return breadcrumbs(locale, [
    { href: '/console', label: html`${t(locale, 'console.title')}` },
    { href: '/console#sites', label: html`${t(locale, 'console.sites.title')}` },
    ...(here
      ? [{ href: path('/console/sites/', site.clientId), label: bdi(site.name) }, { label: html`${here}` }]
      : [{ label: bdi(site.name) }]),
  ]);
}

function statusBadge(locale: Locale, site: ConsoleSiteView): SafeHtml {
  switch (site.status) {
    case 'connected': return html`<span class="badge badge-ok">${t(locale, 'console.sites.connected')}</span>`;
    case 'blocked': return html`<span class="badge badge-danger">${t(locale, 'console.sites.blocked')}</span>`;
    case 'access_removed': return html`<span class="badge badge-neutral">${t(locale, 'console.sites.access_removed')}</span>`;
    default: return html`<span class="badge badge-neutral">${t(locale, 'console.sites.removed')}</span>`;
  }
}

/** Scopes in plain words: the sentences the consent page uses. */
function accessList(locale: Locale, site: SiteDetailView): SafeHtml {
  if (site.status !== 'connected') return html`<p>${t(locale, 'console.site.no_access_now')}</p>`;
  const scopes = new Set(site.scopes);
  if (site.offlineAccess) scopes.add('offline_access');
  if (scopes.size === 0) return html`<p>${t(locale, 'console.sites.no_access')}</p>`;
  return html`<ul class="list">${[...scopes].map((scope) => {
    const plain = Object.hasOwn(SCOPE_KEYS, scope) ? t(locale, `consent.scope.${scope}` as 'consent.scope.openid') : undefined;
    return html`<li>${plain ?? html`<code>${scope}</code>`}</li>`;
  })}</ul>`;
}

function messagesList(locale: Locale, site: SiteDetailView): SafeHtml {
  const siteName = bdi(site.name);
  if (!site.messages) return html`<p>${tx(locale, 'console.site.messages_none', { siteName })}</p>`;
  const { muted, categories } = site.messages;
  return html`${muted ? html`<p><span class="badge badge-muted">${t(locale, 'console.senders.muted')}</span> ${tx(locale, 'console.site.messages_muted', { siteName })}</p>` : null}
<dl class="facts">
${CATEGORIES.map((category) => html`<div><dt>${t(locale, `category.${category}`)}</dt><dd>${t(locale, `console.delivery.${categories[category]}`)}</dd></div>`)}
</dl>
<p class="more"><a href="/console#senders">${t(locale, 'console.site.messages_change')}</a></p>`;
}

function actions(locale: Locale, csrf: string, site: SiteDetailView): SafeHtml | null {
  const siteName = bdi(site.name);
  const block = html`<a class="btn danger-outline" href="${path('/console/sites/', site.clientId, '/block')}"><span>${tx(locale, 'console.sites.block', { siteName })}</span></a>`;
  switch (site.status) {
    case 'connected': return html`<div class="item-foot">${removeAccessLink(locale, site, 'site')}${block}</div>`;
    case 'access_removed': return html`<div class="item-foot">${accessRemovedLine(locale, site)}${block}</div>`;
    case 'blocked': return html`<div class="item-foot"><p class="blocked-on">${tx(locale, 'console.sites.blocked_on', { date: site.blockedAt === undefined ? '—' : timeTag(locale, site.blockedAt) })}</p>
${buttonForm(path('/console/sites/', site.clientId, '/unblock'), csrf, tx(locale, 'console.sites.unblock', { siteName }), 'btn secondary')}</div>`;
    default: return html`<p class="blocked-on">${tx(locale, 'console.sites.removed_explain', { orgName: bdi(site.removedBy ?? ''), siteName })}</p>`;
  }
}

export function siteDetailPage(input: Common & { site: SiteDetailView; notice?: SiteDetailNotice | undefined }): Page {
  const { locale, serviceName, site } = input;
  const home = ownLink(site.uri, site.ownHosts);
  const main = html`${crumbs(locale, site)}
<div class="page-head confirm-head">
${siteLogo(locale, site, 'lg')}
<div class="item-name">
<h1>${bdi(site.name)}</h1>
${home ? html`<p class="host">${breakableHost(home.host)}</p>` : null}
</div>
${statusBadge(locale, site)}
</div>
<section id="about" class="card" aria-labelledby="about-title">
<h2 id="about-title">${t(locale, 'console.site.about')}</h2>
<dl class="facts">
<div><dt>${t(locale, 'console.site.home')}</dt><dd>${address(locale, site.uri, site.ownHosts, home?.host ?? site.name)}</dd></div>
<div><dt>${t(locale, 'console.site.policy')}</dt><dd>${address(locale, site.policyUri, site.ownHosts, t(locale, 'console.site.policy'))}</dd></div>
<div><dt>${t(locale, 'console.site.terms')}</dt><dd>${address(locale, site.tosUri, site.ownHosts, t(locale, 'console.site.terms'))}</dd></div>
</dl>
</section>
<section id="access" class="card" aria-labelledby="access-title">
<h2 id="access-title">${t(locale, 'console.site.history')}</h2>
${input.notice ? noticeBanner(t(locale, `console.notice.${input.notice}`)) : null}
<dl class="facts">
<div><dt>${t(locale, 'console.sites.first')}</dt><dd>${timeTag(locale, site.firstSignInAt)}</dd></div>
<div><dt>${t(locale, 'console.sites.last')}</dt><dd>${timeTag(locale, site.lastSignInAt)}</dd></div>
${lastUsedFact(locale, site)}
</dl>
<h3 class="subhead">${t(locale, 'console.sites.access')}</h3>
${accessList(locale, site)}
${actions(locale, input.csrf, site)}
</section>
<section id="messages" class="card" aria-labelledby="messages-title">
<h2 id="messages-title">${t(locale, 'console.site.messages')}</h2>
${messagesList(locale, site)}
</section>
<p class="muted footnote">${t(locale, 'console.times_utc')}</p>`;
  return renderPage({ locale, title: site.name, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail) });
}

/** Remove access of one site: what happens, and how it differs from Block. */
export function removeAccessConfirmPage(input: Common & { site: ConsoleSiteView; from: 'console' | 'site' }): Page {
  const { locale, serviceName, site } = input;
  const siteName = bdi(site.name);
  const title = t(locale, 'console.remove_access.title', { siteName: site.name });
  const cancel = input.from === 'site' ? path('/console/sites/', site.clientId) : '/console#sites';
  const main = html`<div class="confirm-head">
${siteLogo(locale, site, 'lg')}
<h1>${tx(locale, 'console.remove_access.title', { siteName })}</h1>
</div>
<p class="lead">${tx(locale, 'console.remove_access.intro', { siteName })}</p>
<ul class="consequences">
<li>${tx(locale, 'console.remove_access.tokens', { siteName })}</li>
<li>${tx(locale, 'console.remove_access.messages', { siteName })}</li>
<li>${tx(locale, 'console.remove_access.signin', { siteName })}</li>
</ul>
<p class="muted">${tx(locale, 'console.remove_access.block_hint', { siteName })}</p>
<div class="actions">
<form method="post" action="${path('/console/sites/', site.clientId, '/remove-access')}">
<input type="hidden" name="csrf" value="${input.csrf}">
<input type="hidden" name="from" value="${input.from}">
<button type="submit" class="danger">${t(locale, 'console.remove_access.submit')}</button>
</form>
<a class="button secondary" href="${cancel}">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountEmail) });
}

/** Remove access from all sites: the sites that lose it, one confirmation. */
export function removeAllConfirmPage(input: Common & { sites: ConsoleSiteView[] }): Page {
  const { locale, serviceName } = input;
  const title = t(locale, 'console.remove_all.title');
  const connected = input.sites.filter((site) => site.status === 'connected');
  const main = html`<h1>${title}</h1>
${connected.length === 0
    ? html`<p class="lead">${t(locale, 'console.remove_all.none')}</p>
<div class="actions"><a class="button secondary" href="/console#sites">${t(locale, 'console.org.back')}</a></div>`
    : html`<p class="lead">${t(locale, 'console.remove_all.intro')}</p>
<ul class="consequences">
${connected.map((site) => html`<li>${bdi(site.name)}</li>`)}
</ul>
<p class="muted">${t(locale, 'console.remove_all.after')}</p>
<div class="actions">
${buttonForm('/console/remove-access', input.csrf, t(locale, 'console.remove_all.submit'), 'danger')}
<a class="button secondary" href="/console#sites">${t(locale, 'console.cancel')}</a>
</div>`}`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountEmail) });
}
