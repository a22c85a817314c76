import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { notificationLetter } from '../../views/letters/notification.ts';
import type { Category, NotificationLetterInput } from '../../views/letters/notification.ts';

const SCRIPT = '<script>alert(1)</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const HOSTILE = `${SCRIPT}${BREAKOUT}`;
const DIR: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', de: 'ltr', fr: 'ltr', ar: 'rtl' };
const CATEGORIES: Category[] = ['transactional', 'product', 'promotions'];

const base: NotificationLetterInput = {
  locale: 'en',
  serviceName: 'Acme ID',
  siteName: 'Shop',
  siteHost: 'shop.example',
  clientId: 'shop',
  issuerHost: 'id.example',
  category: 'transactional',
  title: 'Your order 1234 has shipped',
  body: 'Hello Ann,\nyour parcel left our warehouse.\n\nTrack it on shop.example.com or call 10.0.0.1.',
  url: 'https://shop.example/orders/1234',
  unsubscribeUrl: 'https://id.example/unsubscribe/tok.sig',
  consoleUrl: 'https://id.example/console',
};

function anchors(doc: string): { href: string | undefined; text: string }[] {
  return [...doc.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/gi)].map((m) => ({
    href: (m[1] ?? '').match(/\shref="([^"]*)"/)?.[1],
    text: m[2] ?? '',
  }));
}

function count(source: string, pattern: RegExp): number {
  return [...source.matchAll(pattern)].length;
}

/** The site's block: the bordered table holding the label, the title and the body. */
function siteBlock(doc: string): { label: string; title: string; body: string } {
  const m = doc.match(/<p [^>]*>([^<]*)<\/p>\n<h1 dir="auto"[^>]*>([\s\S]*?)<\/h1>\n<p dir="auto"[^>]*>([\s\S]*?)<\/p>/);
  expect(m, 'site block').to.not.equal(null);
  return { label: m?.[1] ?? '', title: m?.[2] ?? '', body: m?.[3] ?? '' };
}

/** Decodes RFC 2047 B-encoded words (what a mail client shows). */
function decodeWords(value: string): string {
  return value.replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=\s*/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
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

  describe('lang and dir', () => {
    for (const locale of LOCALES) {
      it(`are on the html element and the wrapper div (${locale})`, () => {
        const letter = notificationLetter({ ...base, locale });
        expect(letter.html).to.match(/^<!doctype html>\n<html /);
        expect(letter.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
        expect(letter.html).to.include(`<div lang="${locale}" dir="${DIR[locale]}" style=`);
      });
    }

    it('are rtl for Arabic, and the site\'s words keep their own direction', () => {
      const letter = notificationLetter({ ...base, locale: 'ar' });
      expect(letter.html).to.include('<html lang="ar" dir="rtl">');
      expect(letter.html).to.include('<div lang="ar" dir="rtl" style=');
      expect(letter.html).to.match(/<h1 dir="auto"/);
      expect(letter.html).to.match(/<p dir="auto"/);
      expect(letter.html).to.include(escapeHtml(t('ar', 'notify.why', { siteName: 'Shop', serviceName: 'Acme ID' })));
    });
  });

  describe('plain-text part', () => {
    it('has the same content, the url on its own line and both links as plain URLs', () => {
      const letter = notificationLetter(base);
      expect(letter.text.split('\n')).to.deep.equal([
        'Shop sent you this message through Acme ID.',
        '',
        `Message from Shop · ${neutralizeLinks('shop.example', 'title')}`,
        '----------------------------------------',
        'Your order 1234 has shipped',
        '',
        ...neutralizeLinks(base.body, 'body').split('\n'),
        '----------------------------------------',
        '',
        'Open on Shop:',
        'https://shop.example/orders/1234',
        '',
        'You receive this because you signed in to Shop with your Acme ID account.',
        'Category: Orders, invoices and appointments (transactional)',
        '',
        'Unsubscribe from these emails:',
        'https://id.example/unsubscribe/tok.sig',
        '',
        'Manage senders and categories:',
        'https://id.example/console',
        '',
        '— Acme ID',
      ]);
    });

    it('carries the body verbatim after neutralizeLinks, and no url line without a url', () => {
      const body = 'a <b> & "c"\n\tevil.example.com\nhttps://evil.example/x';
      const letter = notificationLetter({ ...base, body, url: undefined });
      expect(letter.text).to.include(neutralizeLinks(body, 'body'));
      expect(letter.text).to.include('https://evil.example/x');
      expect(letter.text).to.not.include('https://shop.example/orders/1234');
    });

    for (const locale of LOCALES) {
      it(`is in the reader's language (${locale})`, () => {
        const { text } = notificationLetter({ ...base, locale });
        expect(text).to.include(`${t(locale, 'notify.open', { siteName: 'Shop' })}:\nhttps://shop.example/orders/1234\n`);
        expect(text).to.include(`${t(locale, 'notify.stop')}:\nhttps://id.example/unsubscribe/tok.sig\n`);
        expect(text).to.include(`${t(locale, 'notify.manage')}:\nhttps://id.example/console\n`);
      });
    }
  });

  describe('headers', () => {
    it('have Auto-Submitted (RFC 3834), Content-Language, List-Unsubscribe, One-Click and List-Id (RFC 8058, RFC 2919)', () => {
      expect(notificationLetter(base).headers).to.deep.equal({
        'Auto-Submitted': 'auto-generated',
        'Content-Language': 'en',
        'List-Unsubscribe': '<https://id.example/unsubscribe/tok.sig>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'List-Id': 'Shop <shop.notify.id.example>',
      });
    });

    it('name the reader\'s language in Content-Language', () => {
      expect(notificationLetter({ ...base, locale: 'ar' }).headers['Content-Language']).to.equal('ar');
    });

    it('make the List-Id a lower-case dot-atom, the phrase plain atoms without quotes or backslashes', () => {
      const letter = notificationLetter({ ...base, siteName: 'Shop "Best" \\ Co\r\nX', clientId: 'My_Client.ID/1', issuerHost: 'ID.Example:3000' });
      expect(letter.headers['List-Id']).to.equal('Shop Best Co X <my-client-id-1.notify.id.example>');
      expect(notificationLetter({ ...base, siteName: "Bob's Shop & Co" }).headers['List-Id']).to.equal("Bob's Shop & Co <shop.notify.id.example>");
      const dev = notificationLetter({ ...base, siteName: '""', issuerHost: 'localhost:3000' });
      expect(dev.headers['List-Id']).to.equal('<shop.notify.localhost>');
    });

    it('encode any other site name as RFC 2047 words, so the header stays ASCII and unquoted', () => {
      for (const siteName of ['Café Zürich', 'متجر الكتب', 'Ünïcødé '.repeat(20).trim(), 'Books Ltd.', 'a=?b', 'x <y@z> (c)']) {
        const id = notificationLetter({ ...base, siteName }).headers['List-Id'] ?? '';
        expect(id).to.match(/^=\?UTF-8\?B\?[^"\\]+ <shop\.notify\.id\.example>$/);
        for (const word of id.split(' ').slice(0, -1)) expect(word.length).to.be.at.most(75);
        expect(decodeWords(id.replace(/ <[^>]*>$/, ''))).to.equal([...siteName].slice(0, 100).join('').trim());
      }
    });

    it('stay on one line and ASCII whatever the inputs contain', () => {
      const letter = notificationLetter({
        ...base,
        siteName: `${HOSTILE}\r\nBcc: x@y.example`,
        clientId: 'a\r\nb',
        issuerHost: 'id.example\r\nX: y',
        unsubscribeUrl: 'https://id.example/unsubscribe/a"b<c>d e\r\nX-Evil: 1',
      });
      for (const value of Object.values(letter.headers)) expect(value).to.match(/^[\x20-\x7e]+$/);
      expect(letter.headers['List-Unsubscribe']).to.equal('<https://id.example/unsubscribe/a%22b%3Cc%3Ed%20eX-Evil:%201>');
    });
  });

  describe('through nodemailer and mailparser', () => {
    // nodemailer encodes a whole custom header value that holds a '"' or non-ASCII
    // text; these headers must go out exactly as the letter made them.
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

    for (const siteName of ['Shop', "Bob's Shop & Co", 'Shop "Best" \\ Co', 'Café Zürich', 'متجر الكتب', 'Books Ltd.', HOSTILE]) {
      it(`keep List-Id, List-Unsubscribe and the From name intact (${siteName})`, async () => {
        const letter = notificationLetter({ ...base, locale: 'de', siteName, clientId: 'n-site', issuerHost: '127.0.0.1:4567' });
        const info = await transport.sendMail({
          from: { name: letter.fromName, address: 'no-reply@id.example' },
          to: 'ann@example.com',
          subject: letter.subject,
          text: letter.text,
          html: letter.html,
          headers: letter.headers,
        });
        const raw = (info.message as Buffer).toString('utf8');
        const head = `\n${raw.slice(0, raw.indexOf('\n\n')).replace(/\n[ \t]+/g, ' ')}\n`; // unfolded, one header a line
        expect(head).to.include(`\nList-ID: ${letter.headers['List-Id']}\n`);
        expect(head).to.include(`\nList-Unsubscribe: <${base.unsubscribeUrl}>\n`);
        expect(head).to.include('\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\n');
        const parsed = await simpleParser(raw);
        expect(parsed.from?.value[0]?.name).to.equal(letter.fromName);
        expect(parsed.subject).to.equal(letter.subject);
        const list = parsed.headers.get('list') as { id?: { id?: string }; unsubscribe?: { url?: string } };
        expect(list.id?.id).to.equal('n-site.notify.127.0.0.1');
        expect(list.unsubscribe?.url).to.equal(base.unsubscribeUrl);
      });
    }
  });

  describe('links', () => {
    it('are escaped attribute values that cannot break out', () => {
      const letter = notificationLetter({
        ...base,
        url: 'https://shop.example/a?x=1&y="><script>alert(1)</script>\'',
        unsubscribeUrl: 'https://id.example/unsubscribe/t"><img src=x>',
        consoleUrl: "https://id.example/console?a='b'&c=<d>",
      });
      expect(letter.html).to.not.include('<script');
      expect(letter.html).to.not.include('<img');
      expect(anchors(letter.html).map((a) => a.href)).to.deep.equal([
        'https://shop.example/a?x=1&amp;y=%22%3E%3Cscript%3Ealert(1)%3C/script%3E%27',
        'https://id.example/unsubscribe/t%22%3E%3Cimg%20src=x%3E',
        'https://id.example/console?a=%27b%27&amp;c=%3Cd%3E',
      ]);
      expect(letter.text).to.include('\nhttps://shop.example/a?x=1&y=%22%3E%3Cscript%3Ealert(1)%3C/script%3E%27\n');
    });

    it('refuse a url that is not https, and unsubscribe or console links that are not http(s)', () => {
      for (const url of ['javascript:alert(1)', 'http://shop.example/x', 'data:text/html,x', '//shop.example/x', 'shop.example', '']) {
        expect(() => notificationLetter({ ...base, url }), url).to.throw(TypeError, /url/);
      }
      expect(() => notificationLetter({ ...base, unsubscribeUrl: 'javascript:alert(1)' })).to.throw(TypeError, /unsubscribeUrl/);
      expect(() => notificationLetter({ ...base, consoleUrl: '/console' })).to.throw(TypeError, /consoleUrl/);
      expect(notificationLetter({ ...base, unsubscribeUrl: 'http://localhost:3000/unsubscribe/t' }).headers['List-Unsubscribe'])
        .to.equal('<http://localhost:3000/unsubscribe/t>');
    });
  });

  describe('email HTML', () => {
    for (const locale of LOCALES) {
      it(`is a table layout with inline styles only, no scripts, no images (${locale})`, () => {
        const letter = notificationLetter({ ...base, locale, siteName: HOSTILE, title: HOSTILE, body: HOSTILE });
        expect(letter.html).to.not.match(/<script\b|<style\b|<link\b|<img\b|<iframe\b|<form\b/i);
        // Inside tags only: the hostile text itself is there, escaped.
        expect(letter.html).to.not.match(/<[^>]*\son[a-z]+=/i);
        expect(letter.html).to.not.match(/<[^>]*\s(?:src|background)=/i);
        expect(letter.html).to.not.match(/url\(/i);
        expect(letter.html).to.include('<table role="presentation"');
        expect(letter.html).to.include('<meta name="color-scheme" content="light">');
        expect(letter.html).to.include('<meta charset="utf-8">');
        // Every element in the body carries its own background or inherits one: light text never lands on a dark client background.
        expect(letter.html).to.match(/<body style="[^"]*background-color:#f3f4f6/);
      });
    }
  });
});
