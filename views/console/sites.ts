/** Connected sites: each site the person signed in to, what it may do, Block site and Remove access, and Block's confirmation page. */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { renderPage, type Page } from '../layout.ts';
import * as siteActions from './site-actions.ts';
import { accessRemovedLine, accountBar, bdi, breakableHost, buttonForm, httpsUrl, newTab, path, SCOPE_KEYS, sectionNotice, siteLogo, timeTag, tx, type ConsolePageInput, type ConsoleSiteView } from './parts.ts';

function scopeList(locale: Locale, site: Pick<ConsoleSiteView, 'scopes' | 'offlineAccess'>): SafeHtml {
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
  const removed = site.status === 'removed';
  const noAccess = site.status === 'access_removed';
  const name = uri
    ? html`<a href="${uri.href}" rel="noopener noreferrer" target="_blank">${bdi(site.name)}${newTab(locale)}</a>`
    : bdi(site.name);
  const action = removed
    ? html`<div class="item-foot">
<p class="blocked-on">${tx(locale, 'console.sites.removed_explain', { orgName: bdi(site.removedBy ?? ''), siteName: bdi(site.name) })}</p>
</div>`
    : blocked
      ? html`<div class="item-foot">
<p class="blocked-on">${tx(locale, 'console.sites.blocked_on', { date: site.blockedAt === undefined ? '—' : timeTag(locale, site.blockedAt) })}</p>
${buttonForm(path('/console/sites/', site.clientId, '/unblock'), csrf, tx(locale, 'console.sites.unblock', { siteName: bdi(site.name) }), 'btn secondary')}
</div>`
      : html`<div class="item-foot">
${noAccess ? accessRemovedLine(locale, site) : siteActions.removeAccessLink(locale, site)}
<a class="btn danger-outline" href="${path('/console/sites/', site.clientId, '/block')}"><span>${tx(locale, 'console.sites.block', { siteName: bdi(site.name) })}</span></a>
</div>`;
  const badge = removed
    ? html`<span class="badge badge-neutral">${t(locale, 'console.sites.removed')}</span>`
    : blocked
      ? html`<span class="badge badge-danger">${t(locale, 'console.sites.blocked')}</span>`
      : noAccess
        ? html`<span class="badge badge-neutral">${t(locale, 'console.sites.access_removed')}</span>`
        : html`<span class="badge badge-ok">${t(locale, 'console.sites.connected')}</span>`;
  return html`<li class="tile${blocked || removed || noAccess ? ' is-blocked' : ''}">
<div class="item-head">
${siteLogo(locale, site)}
<div class="item-name">
<h3 id="${id}">${name}</h3>
${uri ? html`<p class="host">${breakableHost(uri.host)}</p>` : null}
</div>
${badge}
</div>
<dl class="facts">
<div><dt>${t(locale, 'console.sites.first')}</dt><dd>${timeTag(locale, site.firstSignInAt)}</dd></div>
<div><dt>${t(locale, 'console.sites.last')}</dt><dd>${timeTag(locale, site.lastSignInAt)}</dd></div>
${siteActions.lastUsedFact(locale, site)}
</dl>
${removed || noAccess ? null : html`<p class="label">${t(locale, 'console.sites.access')}</p>
${scopeList(locale, site)}`}
${siteActions.detailsLink(locale, site)}
${action}
</li>`;
}

export function sitesSection(input: ConsolePageInput): SafeHtml {
  const { locale, serviceName } = input;
  return html`<section id="sites" class="card" aria-labelledby="sites-title">
<div class="section-head">
<h2 id="sites-title">${t(locale, 'console.sites.title')}</h2>
<p class="muted">${t(locale, 'console.sites.intro', { serviceName })}</p>
</div>
${sectionNotice(input, 'sites')}
${input.sites.length === 0
    ? html`<p class="empty">${t(locale, 'console.sites.empty', { serviceName })}</p>`
    : html`<ul class="tiles">
${input.sites.map((site, i) => siteItem(locale, input.csrf, site, i))}
</ul>
${siteActions.removeAllLink(locale, input.sites)}`}
</section>`;
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
