/** Messages: the inbox, newest first, the site's words as written and its url the one link. */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { bdi, buttonForm, httpsUrl, newTab, path, sectionNotice, siteLogo, timeTag, tx, type ConsoleMessageView, type ConsolePageInput } from './parts.ts';

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
${message.from === 'service' ? html`<a class="btn primary" href="/console/sessions">${t(locale, 'theft.devices_link')}</a>` : null}
${message.read ? null : buttonForm(`${base}/read`, csrf, t(locale, 'console.inbox.mark_read'), 'btn secondary', id)}
${buttonForm(`${base}/delete`, csrf, t(locale, 'console.inbox.delete'), 'btn danger-quiet', id)}
</div>
</article>
</li>`;
}

export function inboxSection(input: ConsolePageInput): SafeHtml {
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
${sectionNotice(input, 'inbox')}
${inbox.items.length === 0
    ? html`<p class="empty">${t(locale, inbox.cursor ? 'console.inbox.empty_page' : 'console.inbox.empty')}</p>`
    : html`<ul class="messages">
${[...inbox.items].sort((a, b) => b.receivedAt - a.receivedAt).map((m, i) => messageItem(locale, input.csrf, m, i))}
</ul>`}
${pager}
</section>`;
}
