/** The notification letter's HTML and text parts: lang and dir, the plain text, its links, and HTML that mail clients show safely. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { notificationLetter } from '../../views/letters/notification.ts';
import { DIR, HOSTILE } from '../helpers/html.ts';
import { anchors, base } from '../helpers/notification-letter.ts';

describe('notificationLetter', () => {
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
