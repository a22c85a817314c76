/** The console page's senders (mute, categories) and inbox (messages, paging, times). */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { PAGE_STYLE } from '../../views/layout.ts';
import { consolePage, type ConsolePageInput } from '../../views/console.ts';
import { CATEGORIES, DELIVERIES, element, input, message, messages } from '../helpers/console-views.ts';
import { forms, links, tags, text } from '../helpers/html.ts';

describe('consolePage', () => {
  describe('senders', () => {
    it('one form per sender with a labelled mute checkbox and three fieldsets of radios', () => {
      const page = consolePage(input()).html;
      const [shop, news] = forms(page).filter((f) => f.attrs.action?.startsWith('/console/senders/'));
      expect(shop?.body).to.include('<input type="checkbox" id="sender-0-muted" name="muted" value="on" aria-describedby="sender-0-muted-hint">');
      expect(shop?.body).to.include('<label for="sender-0-muted">Mute <bdi>Book Shop</bdi>: no messages at all</label>');
      expect(news?.body).to.include('<input type="checkbox" id="sender-1-muted" name="muted" value="on" checked aria-describedby="sender-1-muted-hint">');
      expect(news?.body).to.include('<span class="badge badge-muted">Muted</span>');
      expect(shop?.body).to.not.include('badge-muted');
      for (const form of [shop, news]) {
        const fieldsets = [...(form?.body ?? '').matchAll(/<fieldset>\n<legend>([^<]*)<\/legend>([\s\S]*?)<\/fieldset>/g)];
        expect(fieldsets.map((f) => f[1])).to.deep.equal(CATEGORIES.map((c) => t('en', `category.${c}`)));
        for (const [i, fieldset] of fieldsets.entries()) {
          const radios = tags(fieldset[2] ?? '', 'input');
          expect(radios.map((r) => [r.attrs.type, r.attrs.name, r.attrs.value])).to.deep.equal(DELIVERIES.map((d) => ['radio', CATEGORIES[i], d]));
          expect(radios.filter((r) => 'checked' in r.attrs)).to.have.length(1);
        }
        expect(form?.buttons.map((b) => [b.text, b.attrs.type])).to.deep.equal([['Save', 'submit']]);
      }
      expect(shop?.body).to.include('<input type="radio" id="sender-0-product-account" name="product" value="account" checked>\n<label for="sender-0-product-account">In your account only</label>');
      expect(shop?.body).to.include('<label for="sender-0-transactional-account_and_email">In your account and by email</label>');
      expect(shop?.body).to.include('<label for="sender-0-promotions-off">Off</label>');
    });

    it('has an empty state', () => {
      const page = consolePage(input({ senders: [] })).html;
      expect(element(page, 'section', 'senders')).to.include('<p class="empty">No site can send you messages yet.</p>');
      expect(forms(page).filter((f) => f.attrs.action?.startsWith('/console/senders/'))).to.have.length(0);
    });
  });

  describe('inbox', () => {
    it('shows each message: site, category, time, unread marker, title, body, actions', () => {
      const page = consolePage(input()).html;
      const [first = '', second = ''] = messages(page);
      expect(first).to.include('<span class="site-name"><bdi>Book Shop</bdi></span>');
      expect(first).to.include('<span class="badge badge-neutral">Orders, invoices and appointments</span>');
      expect(first).to.include('<time datetime="2026-03-03T10:12:00.000Z">Mar 3, 2026, 10:12 AM</time>');
      expect(first).to.include('<span class="badge badge-unread">Unread</span>');
      expect(first).to.include('<h3 id="msg-0" class="message-title" dir="auto">Your order has shipped</h3>');
      expect(first).to.include('<p class="message-body" dir="auto">Hello,\nyour order is on its way.</p>');
      expect(links(first).map((l) => [l.attrs.href, l.attrs.rel, l.attrs.target, text(l.text)])).to.deep.equal([
        ['https://shop.example/orders/1', 'noopener noreferrer', '_blank', 'Open on Book Shop (opens in a new tab)'],
      ]);
      expect(forms(first).map((f) => [f.attrs.action, f.buttons[0]?.text])).to.deep.equal([
        ['/console/inbox/m1/read', 'Mark as read'],
        ['/console/inbox/m1/delete', 'Delete'],
      ]);
      expect(page).to.match(/<li class="message is-unread">/);

      expect(second).to.include('<span class="badge badge-neutral">Product news</span>');
      expect(second).to.not.include('Unread');
      expect(links(second)).to.have.length(0);
      expect(forms(second).map((f) => f.attrs.action)).to.deep.equal(['/console/inbox/m2/delete']);
    });

    it('keeps the newlines of the body, shown with white-space: pre-wrap', () => {
      const page = consolePage(input({ inbox: { items: [message({ body: 'a\r\nb\rc\n\nd' })], unread: 1, next: null, cursor: null } })).html;
      expect(page).to.include('<p class="message-body" dir="auto">a\nb\nc\n\nd</p>');
      expect(PAGE_STYLE).to.match(/\.message-body\{[^}]*white-space:pre-wrap/);
    });

    it('the url is the only link: addresses and markup in the title and body stay text', () => {
      const body = 'Visit https://evil.example now or <a href="https://evil.example">here</a> or www.evil.example';
      const title = '<a href="https://evil.example">Title</a> https://evil.example';
      const page = consolePage(input({ inbox: { items: [message({ title, body })], unread: 1, next: null, cursor: null } })).html;
      const [msg] = messages(page);
      expect(links(msg ?? '').map((l) => l.attrs.href)).to.deep.equal(['https://shop.example/orders/1']);
      expect(msg).to.include('Visit https://evil.example now or &lt;a href=&quot;https://evil.example&quot;&gt;here&lt;/a&gt; or www.evil.example');
      expect(msg).to.include('&lt;a href=&quot;https://evil.example&quot;&gt;Title&lt;/a&gt; https://evil.example</h3>');
      expect(page).to.not.match(/<a [^>]*evil/);
    });

    it('links the url only when it is https', () => {
      for (const url of ['http://shop.example/x', 'javascript:alert(1)', 'data:text/html,x', '/relative', 'not a url', null]) {
        const page = consolePage(input({ inbox: { items: [message({ url })], unread: 1, next: null, cursor: null } })).html;
        expect(links(messages(page)[0] ?? ''), String(url)).to.have.length(0);
      }
    });

    it('lists newest first', () => {
      const items = [message({ id: 'old', title: 'Old', receivedAt: 1000 }), message({ id: 'new', title: 'New', receivedAt: 2000 })];
      const page = consolePage(input({ inbox: { items, unread: 2, next: null, cursor: null } })).html;
      expect(messages(page).map((m) => m.match(/class="message-title" dir="auto">([^<]*)</)?.[1])).to.deep.equal(['New', 'Old']);
    });

    it('says how many are unread in the heading and the nav', () => {
      const page = consolePage(input({ inbox: { ...input().inbox, unread: 3 } })).html;
      expect(page).to.include('<h2 id="inbox-title">Messages <span class="count">(3 unread)</span></h2>');
      expect(page).to.include('<a href="#inbox">Messages <span class="pill" aria-hidden="true">3</span><span class="visually-hidden">(3 unread)</span></a>');
      const none = consolePage(input({ inbox: { ...input().inbox, unread: 0 } })).html;
      expect(none).to.include('<h2 id="inbox-title">Messages</h2>');
      expect(none).to.include('<a href="#inbox">Messages</a>');
    });

    it('pages with Older and Newest links', () => {
      const pager = (inbox: Partial<ConsolePageInput['inbox']>) =>
        links(consolePage(input({ inbox: { ...input().inbox, ...inbox } })).html.match(/<nav class="pager"[\s\S]*?<\/nav>/)?.[0] ?? '')
          .map((l) => [l.attrs.href, l.text]);
      expect(pager({})).to.deep.equal([]);
      expect(pager({ next: 'c2' })).to.deep.equal([['/console?cursor=c2#inbox', 'Older messages']]);
      expect(pager({ next: 'a b&c/=?#', cursor: 'c1' })).to.deep.equal([
        ['/console#inbox', 'Newest messages'],
        ['/console?cursor=a%20b%26c%2F%3D%3F%23#inbox', 'Older messages'],
      ]);
      expect(pager({ cursor: 'c1' })).to.deep.equal([['/console#inbox', 'Newest messages']]);
      const page = consolePage(input({ inbox: { ...input().inbox, next: 'x' } })).html;
      expect(page).to.include('<nav class="pager" aria-label="More messages">');
    });

    it('has empty states', () => {
      const empty = consolePage(input({ inbox: { items: [], unread: 0, next: null, cursor: null } })).html;
      expect(element(empty, 'section', 'inbox')).to.include('<p class="empty">No messages. When a site you use writes to you, its message appears here.</p>');
      const past = consolePage(input({ inbox: { items: [], unread: 0, next: null, cursor: 'c9' } })).html;
      expect(element(past, 'section', 'inbox')).to.include('<p class="empty">No more messages.</p>');
    });

    it('encodes message ids in the routes', () => {
      const page = consolePage(input({ inbox: { items: [message({ id: '../x?y' })], unread: 1, next: null, cursor: null } })).html;
      expect(forms(page).map((f) => f.attrs.action)).to.include.members(['/console/inbox/..%2Fx%3Fy/read', '/console/inbox/..%2Fx%3Fy/delete']);
    });

    it('shows times in the reader\'s language, in UTC', () => {
      const at = Date.UTC(2026, 2, 3, 22, 45);
      for (const locale of LOCALES) {
        const page = consolePage(input({ locale, inbox: { items: [message({ receivedAt: at })], unread: 1, next: null, cursor: null } })).html;
        const shown = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(at);
        expect(page).to.include(`<time datetime="2026-03-03T22:45:00.000Z">${shown}</time>`);
      }
      expect(consolePage(input({ locale: 'de', inbox: { items: [message({ receivedAt: at })], unread: 1, next: null, cursor: null } })).html)
        .to.include('>03.03.2026, 22:45</time>');
    });
  });
});
