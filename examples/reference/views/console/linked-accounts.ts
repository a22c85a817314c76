/**
 * The reference provider's Linked accounts section of the console (a host
 * section): each configured upstream, linked (which account, since when,
 * last used, Unlink) or not (Link, which signs in at the upstream). Plain
 * forms, no script. The last way in cannot be unlinked.
 */
import { bdi, buttonForm, html, path, t, timeTag, tx, type SafeHtml } from '../../../../src/pages.ts';
import { waysNotice, type WaysInput } from './passkeys.ts';

export interface LinkedAccountView {
  /** The upstream's id and configured name. */
  id: string;
  name: string;
  link?: {
    /** Which account at the upstream: its address or name, as it said when linked. */
    label?: string | undefined;
    linkedAt: number;
    lastUsedAt?: number | undefined;
    /** Since when the upstream holds sign-in through it (it said the account may be taken over; ms). */
    heldAt?: number | undefined;
    /** When the upstream said its sign-in details changed or its tokens were revoked (ms). */
    markedAt?: number | undefined;
  } | undefined;
}

function upstreamItem(input: WaysInput, upstream: LinkedAccountView, index: number): SafeHtml {
  const { locale, csrf } = input;
  const id = `upstream-${index}`;
  const name = bdi(upstream.name);
  const base = path('/console/linked-accounts/', upstream.id);
  const { link } = upstream;
  return html`<li class="tile${link ? '' : ' is-blocked'}">
<div class="item-head">
<div class="item-name">
<h3 id="${id}">${name}</h3>
${link?.label ? html`<p class="host">${bdi(link.label)}</p>` : null}
</div>
${link
    ? html`<span class="badge badge-ok">${t(locale, 'console.upstreams.linked')}</span>`
    : html`<span class="badge badge-neutral">${t(locale, 'console.upstreams.not_linked')}</span>`}
</div>
${link ? html`<dl class="facts">
<div><dt>${t(locale, 'console.upstreams.linked_on')}</dt><dd>${timeTag(locale, link.linkedAt)}</dd></div>
<div><dt>${t(locale, 'console.passkeys.last_used')}</dt><dd>${link.lastUsedAt === undefined ? t(locale, 'console.passkeys.never_used') : timeTag(locale, link.lastUsedAt)}</dd></div>
${link.heldAt === undefined ? null : html`<div id="${id}-held"><dt>${t(locale, 'console.upstreams.held_since')}</dt><dd>${timeTag(locale, link.heldAt)}</dd></div>`}
${link.markedAt === undefined ? null : html`<div id="${id}-marked"><dt>${tx(locale, 'console.upstreams.marked_on', { name })}</dt><dd>${timeTag(locale, link.markedAt)}</dd></div>`}
</dl>` : null}
<div class="item-foot">
${!link
    ? buttonForm(`${base}/link`, csrf, tx(locale, 'console.upstreams.link', { name }), 'btn secondary')
    : input.ways > 1
      ? buttonForm(`${base}/unlink`, csrf, tx(locale, 'console.upstreams.unlink', { name }), 'btn danger-outline')
      : html`<p class="blocked-on">${t(locale, 'console.upstreams.only_way')}</p>`}
</div>
</li>`;
}

/** The Linked accounts section's content (the plugin adds the card and its heading). */
export function linkedAccountsSection(input: WaysInput & { upstreams: LinkedAccountView[] }): string {
  const { locale } = input;
  return html`<p class="muted">${t(locale, 'console.upstreams.intro')}</p>
${waysNotice(locale, input.notice, 'upstream_')}
<ul class="tiles">
${input.upstreams.map((u, i) => upstreamItem(input, u, i))}
</ul>`.toString();
}
