/**
 * The pieces of a Connected sites tile that issue 16 added: "Last used", the
 * link to the site's page, Remove access, and Remove access from all sites.
 */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { bdi, path, timeTag, tx, type ConsoleSiteView } from './parts.ts';

/** "Last used": when the site last used its access, or that it has not yet. */
export function lastUsedFact(locale: Locale, site: Pick<ConsoleSiteView, 'lastUsedAt'>): SafeHtml {
  return html`<div><dt>${t(locale, 'console.sites.last_used')}</dt><dd>${site.lastUsedAt === undefined ? t(locale, 'console.sites.never_used') : timeTag(locale, site.lastUsedAt)}</dd></div>`;
}

/** The way to the site's own page (who runs it, what it can access and send). */
export function detailsLink(locale: Locale, site: ConsoleSiteView): SafeHtml {
  return html`<p class="more"><a href="${path('/console/sites/', site.clientId)}">${tx(locale, 'console.sites.details', { siteName: bdi(site.name) })}</a></p>`;
}

/** Remove access…: to its confirmation. `from` says where to come back to. */
export function removeAccessLink(locale: Locale, site: ConsoleSiteView, from: 'console' | 'site' = 'console'): SafeHtml {
  const href = `${path('/console/sites/', site.clientId, '/remove-access')}${from === 'site' ? '?from=site' : ''}`;
  return html`<a class="btn secondary" href="${href}"><span>${tx(locale, 'console.sites.remove_access', { siteName: bdi(site.name) })}</span></a>`;
}

/** Remove access from all sites…, when at least one site has access. */
export function removeAllLink(locale: Locale, sites: readonly ConsoleSiteView[]): SafeHtml | null {
  if (!sites.some((site) => site.status === 'connected')) return null;
  return html`<div class="section-foot"><a class="btn danger-outline" href="/console/remove-access">${t(locale, 'console.sites.remove_all')}</a></div>`;
}
