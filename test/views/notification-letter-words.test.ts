/** The notification letter's words: the From name, the subject, the site's own words and the text around them. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { notificationLetter } from '../../views/letters/notification.ts';
import type { Category } from '../../views/letters/notification.ts';
import { BREAKOUT, count, HOSTILE } from '../helpers/html.ts';
import { anchors, base } from '../helpers/notification-letter.ts';

const CATEGORIES: Category[] = ['transactional', 'product', 'promotions'];

/** The site's block: the bordered table holding the label, the title and the body. */
function siteBlock(doc: string): { label: string; title: string; body: string } {
  const m = doc.match(/<p [^>]*>([^<]*)<\/p>\n<h1 dir="auto"[^>]*>([\s\S]*?)<\/h1>\n<p dir="auto"[^>]*>([\s\S]*?)<\/p>/);
  expect(m, 'site block').to.not.equal(null);
  return { label: m?.[1] ?? '', title: m?.[2] ?? '', body: m?.[3] ?? '' };
}

describe('notificationLetter', () => {
  describe('fromName', () => {
    it('is "<site> via <service>" in the reader\'s language', () => {
      const want: Record<Locale, string> = { en: 'Shop via Acme ID', de: 'Shop über Acme ID', fr: 'Shop via Acme ID', ar: 'Shop عبر Acme ID' };
      for (const locale of LOCALES) expect(notificationLetter({ ...base, locale }).fromName, locale).to.equal(want[locale]);
    });

    it('stays on one line whatever the names contain, without bidi overrides', () => {
      const letter = notificationLetter({
        ...base,
        siteName: 'Evil\r\nBcc: victim@example.com\t\u2028X\u0085Y\u202E',
        serviceName: 'Acme\nID',
      });
      expect(letter.fromName).to.equal('Evil Bcc: victim@example.com X Y via Acme ID');
      expect(letter.fromName).to.not.match(/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u);
    });

    it('falls back to the host, then the client id, when the name is empty', () => {
      expect(notificationLetter({ ...base, siteName: ' \n ' }).fromName).to.equal('shop.example via Acme ID');
      expect(notificationLetter({ ...base, siteName: '', siteHost: undefined }).fromName).to.equal('shop via Acme ID');
    });
  });

  describe('subject', () => {
    it('is the site\'s title after neutralizeLinks', () => {
      const title = 'Your invoice from shop.example.com';
      expect(neutralizeLinks(title, 'title')).to.not.equal(title); // the precondition of this test
      for (const locale of LOCALES) {
        expect(notificationLetter({ ...base, locale, title }).subject).to.equal(neutralizeLinks(title, 'title'));
      }
    });

    it('is one line', () => {
      const letter = notificationLetter({ ...base, title: 'Hi\r\nBcc: x@evil.example.com\u2028there' });
      expect(letter.subject).to.not.match(/[\r\n\u2028\u2029]/);
      expect(letter.subject).to.equal(neutralizeLinks('Hi Bcc: x@evil.example.com there', 'title'));
    });
  });

  describe('the site\'s words', () => {
    const title = 'Sale <b>today</b> & "more" on evil.example.com';
    const body = 'Line one: visit www.evil.com\nLine <two> & 1.2.3.4\r\n\n  indented https://shop.example/x';

    for (const locale of LOCALES) {
      it(`appear verbatim, escaped and untranslated in their own block (${locale})`, () => {
        const letter = notificationLetter({ ...base, locale, title, body });
        const block = siteBlock(letter.html);
        expect(block.label).to.equal(escapeHtml(`${t(locale, 'notify.message_from', { siteName: 'Shop' })} · ${neutralizeLinks('shop.example', 'title')}`));
        expect(block.title).to.equal(escapeHtml(neutralizeLinks(title, 'title')));
        expect(block.body).to.equal(
          ['Line one: visit www.evil.com', 'Line <two> & 1.2.3.4', '', '  indented https://shop.example/x']
            .map((line) => escapeHtml(neutralizeLinks(line, 'body')))
            .join('<br>'),
        );
        expect(letter.html).to.include('border:1px solid #d1d5db');
        expect(count(letter.html, /<h1\b/g)).to.equal(1);
      });
    }

    it('keep neutralizeLinks\' separators in HTML and text', () => {
      const letter = notificationLetter({ ...base, title, body });
      const neutral = neutralizeLinks('www.evil.com', 'body');
      expect(neutral).to.not.equal('www.evil.com');
      expect(letter.html).to.include(neutral);
      expect(letter.text).to.include(neutral);
      expect(letter.html).to.not.include('www.evil.com');
      expect(letter.text).to.not.include('www.evil.com');
    });

    it('show control characters other than newline and tab as U+FFFD, before neutralizing', () => {
      const letter = notificationLetter({ ...base, body: 'a\u0000b\tc evil\u0007.com' });
      expect(siteBlock(letter.html).body).to.equal(`a\uFFFDb\tc evil\uFFFD.com`);
    });

    it('never become anchors: only url, unsubscribe and console are links', () => {
      const letter = notificationLetter({
        ...base,
        title: '<a href="https://evil.example/t">title link</a> evil.example.com',
        body: 'Go to <a href="https://evil.example/b">here</a>\nhttps://evil.example/phish\njavascript:alert(1)\nwww.evil.com',
      });
      expect(anchors(letter.html)).to.deep.equal([
        { href: 'https://shop.example/orders/1234', text: 'Open on Shop' },
        { href: 'https://id.example/unsubscribe/tok.sig', text: 'Unsubscribe from these emails' },
        { href: 'https://id.example/console', text: 'Manage senders and categories' },
      ]);
      expect(count(letter.html, /<a\b/gi)).to.equal(3);
      expect(count(letter.html, /<[^>]*\shref=/gi)).to.equal(3); // inside tags: the escaped text has its own ' href='
      expect(letter.html).to.not.include('href="https://evil');
      expect(letter.html).to.include('&lt;a href=&quot;https://evil.example/b&quot;&gt;here&lt;/a&gt;');
    });

    it('has just the two footer links when there is no url', () => {
      const letter = notificationLetter({ ...base, url: undefined });
      expect(anchors(letter.html).map((a) => a.href)).to.deep.equal([base.unsubscribeUrl, base.consoleUrl]);
      expect(letter.html).to.not.include('Open on');
      expect(letter.text).to.not.include('Open on');
    });
  });

  describe('the surrounding text', () => {
    for (const locale of LOCALES) {
      it(`is in the reader's language (${locale})`, () => {
        for (const category of CATEGORIES) {
          const letter = notificationLetter({ ...base, locale, category });
          const why = t(locale, 'notify.why', { siteName: 'Shop', serviceName: 'Acme ID' });
          const categoryLine = t(locale, 'notify.category', { label: t(locale, `category.${category}`), category });
          for (const part of [letter.html, letter.text]) {
            expect(part).to.include(part === letter.html ? escapeHtml(why) : why);
            expect(part).to.include(part === letter.html ? escapeHtml(categoryLine) : categoryLine);
          }
          const sentBy = t(locale, 'notify.sent_by').split('{siteName}');
          expect(letter.html).to.include(`${escapeHtml(sentBy[0] ?? '')}<strong>Shop</strong>${escapeHtml((sentBy[1] ?? '').replace('{serviceName}', 'Acme ID'))}`);
          expect(letter.text).to.include(t(locale, 'notify.sent_by', { siteName: 'Shop', serviceName: 'Acme ID' }));
          expect(anchors(letter.html).map((a) => a.text)).to.deep.equal([
            escapeHtml(t(locale, 'notify.open', { siteName: 'Shop' })),
            escapeHtml(t(locale, 'notify.stop')),
            escapeHtml(t(locale, 'notify.manage')),
          ]);
        }
      });
    }

    it('names the category in words in English', () => {
      const lines = CATEGORIES.map((category) => notificationLetter({ ...base, category }).text.split('\n').find((l) => l.startsWith('Category:')));
      expect(lines).to.deep.equal([
        'Category: Orders, invoices and appointments (transactional)',
        'Category: Product news (product)',
        'Category: Promotions (promotions)',
      ]);
    });

    it('escapes a hostile site name, host and service name', () => {
      const letter = notificationLetter({ ...base, siteName: HOSTILE, siteHost: BREAKOUT, serviceName: HOSTILE });
      expect(letter.html).to.not.include('<script');
      expect(letter.html).to.not.include('<img');
      expect(letter.html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
      expect(count(letter.html, /<a\b/gi)).to.equal(3);
    });

    it('keeps a site name that looks like a domain from being linked', () => {
      const letter = notificationLetter({ ...base, siteName: 'paypal.com' });
      expect(letter.html).to.include(`<strong>${neutralizeLinks('paypal.com', 'title')}</strong>`);
      expect(letter.text).to.include(t('en', 'notify.why', { siteName: neutralizeLinks('paypal.com', 'title'), serviceName: 'Acme ID' }));
      expect(letter.fromName).to.equal('paypal.com via Acme ID'); // headers are not linked by mail clients
    });
  });
});
