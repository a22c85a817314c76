/** Senders: each connected site's mute switch and its three categories. */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { csrfField } from '../layout.ts';
import { bdi, CATEGORIES, DELIVERIES, path, sectionNotice, siteLogo, tx, type ConsolePageInput, type ConsoleSenderView } from './parts.ts';

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

export function sendersSection(input: ConsolePageInput): SafeHtml {
  const { locale } = input;
  return html`<section id="senders" class="card" aria-labelledby="senders-title">
<div class="section-head">
<h2 id="senders-title">${t(locale, 'console.senders.title')}</h2>
<p class="muted">${t(locale, 'console.senders.intro')}</p>
</div>
${sectionNotice(input, 'senders')}
${input.senders.length === 0
    ? html`<p class="empty">${t(locale, 'console.senders.empty')}</p>`
    : html`<ul class="senders">
${input.senders.map((sender, i) => senderItem(locale, input.csrf, sender, i))}
</ul>`}
</section>`;
}
