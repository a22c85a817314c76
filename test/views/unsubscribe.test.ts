import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { PAGE_STYLE_HASH } from '../../views/layout.ts';
import { unsubscribePage } from '../../views/unsubscribe.ts';
import type { UnsubscribePageInput, UnsubscribeState } from '../../views/unsubscribe.ts';
import type { Category } from '../../views/letters/notification.ts';

const SCRIPT = '<script>alert(1)</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const HOSTILE = `${SCRIPT}${BREAKOUT}`;
const DIR: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', de: 'ltr', fr: 'ltr', ar: 'rtl' };
const CATEGORIES: Category[] = ['transactional', 'product', 'promotions'];

const STATES: { name: string; state: UnsubscribeState }[] = [
  { name: 'confirm', state: { kind: 'confirm' } },
  { name: 'done/email_off', state: { kind: 'done', did: 'email_off' } },
  { name: 'done/category_off', state: { kind: 'done', did: 'category_off' } },
  { name: 'done/muted', state: { kind: 'done', did: 'muted' } },
  { name: 'invalid', state: { kind: 'invalid' } },
];

const base: UnsubscribePageInput = {
  locale: 'en',
  serviceName: 'Acme ID',
  siteName: 'Shop',
  category: 'transactional',
  action: 'https://id.example/unsubscribe/tok.sig',
  consoleUrl: 'https://id.example/console',
  state: { kind: 'confirm' },
};

type Tag = { raw: string; attrs: Record<string, string> };
type Form = { attrs: Record<string, string>; inputs: Tag[]; buttons: { attrs: Record<string, string>; text: string }[] };

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/\s([a-z-]+)(?:="([^"]*)")?/g)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

function forms(source: string): Form[] {
  return [...source.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map((m) => ({
    attrs: attrs(m[1] ?? ''),
    inputs: [...(m[2] ?? '').matchAll(/<input\b[^>]*>/g)].map((i) => ({ raw: i[0], attrs: attrs(i[0]) })),
    buttons: [...(m[2] ?? '').matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].map((b) => ({ attrs: attrs(b[1] ?? ''), text: b[2] ?? '' })),
  }));
}

function links(source: string): { href: string | undefined; text: string }[] {
  return [...source.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/g)].map((m) => ({ href: attrs(m[1] ?? '').href, text: m[2] ?? '' }));
}

function h1(source: string): string | undefined {
  return source.match(/<h1>([\s\S]*?)<\/h1>/)?.[1];
}

function count(source: string, pattern: RegExp): number {
  return [...source.matchAll(pattern)].length;
}

/** What each form posts: [action, do value, button text, button class]. */
function posts(source: string): [string | undefined, string | undefined, string | undefined, string | undefined][] {
  return forms(source).map((f) => {
    expect(f.attrs.method).to.equal('post');
    expect(f.inputs.map((i) => [i.attrs.type, i.attrs.name])).to.deep.equal([['hidden', 'do']]);
    expect(f.buttons).to.have.length(1);
    return [f.attrs.action, f.inputs[0]?.attrs.value, f.buttons[0]?.text, f.buttons[0]?.attrs.class];
  });
}

function csp(formAction: string): string {
  return `default-src 'none'; style-src 'sha256-${PAGE_STYLE_HASH}'; img-src 'self' data: https:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

describe('unsubscribePage', () => {
  describe('every state in every locale', () => {
    for (const locale of LOCALES) {
      for (const { name, state } of STATES) {
        it(`renders ${name} in ${locale}`, () => {
          for (const category of CATEGORIES) {
            const page = unsubscribePage({ ...base, locale, category, state });
            expect(page.html).to.match(/^<!doctype html>\n<html /);
            expect(page.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
            expect(count(page.html, /<h1\b/g)).to.equal(1);
            expect(page.html).to.not.match(/<script\b/i);
            expect(page.html).to.not.match(/<[^>]*\son[a-z]+=/i);
            expect(page.html.replace(/<style>[\s\S]*?<\/style>/, '')).to.not.match(/[{}]/); // no placeholder left unfilled
            const style = page.html.match(/<style>([\s\S]*?)<\/style>/)?.[1] ?? '';
            expect(createHash('sha256').update(style, 'utf8').digest('base64')).to.equal(PAGE_STYLE_HASH);
            expect(page.csp).to.equal(csp(forms(page.html).length > 0 ? "'self' https://id.example" : "'self'"));
            // Every state leads to the console; no form carries a CSRF field (the token in the URL is the proof).
            expect(links(page.html).filter((l) => l.href === base.consoleUrl)).to.deep.equal([
              { href: base.consoleUrl, text: escapeHtml(t(locale, 'notify.manage')) },
            ]);
            expect(page.html).to.not.include('name="csrf"');
            expect(page.html).to.include(`<title>${escapeHtml(h1(page.html) ?? 'x')} — Acme ID</title>`);
          }
        });
      }
    }
  });

  describe('confirm (GET)', () => {
    for (const locale of LOCALES) {
      it(`asks, says nothing changed yet, and has one button that posts do=email_off (${locale})`, () => {
        const page = unsubscribePage({ ...base, locale, category: 'product' });
        const category = t(locale, 'category.product');
        expect(h1(page.html)).to.equal(escapeHtml(t(locale, 'unsubscribe.confirm.title', { siteName: 'Shop', category })));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.confirm.nothing_yet')));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.confirm.explain', { siteName: 'Shop', serviceName: 'Acme ID' })));
        expect(posts(page.html)).to.deep.equal([[base.action, 'email_off', escapeHtml(t(locale, 'notify.stop')), 'primary']]);
        expect(count(page.html, /<button\b/g)).to.equal(1);
      });
    }

    it('speaks plainly in English', () => {
      const page = unsubscribePage(base);
      expect(h1(page.html)).to.equal('Stop emails from Shop in the category “Orders, invoices and appointments”?');
      expect(page.html).to.include('Nothing has changed yet.');
      expect(page.html).to.include('Messages from Shop will still arrive in your Acme ID account; only the emails stop.');
    });
  });

  describe('done', () => {
    for (const locale of LOCALES) {
      it(`email_off: confirms, then offers category_off and mute, each explained (${locale})`, () => {
        const page = unsubscribePage({ ...base, locale, state: { kind: 'done', did: 'email_off' } });
        const category = t(locale, 'category.transactional');
        expect(h1(page.html)).to.equal(escapeHtml(t(locale, 'unsubscribe.email_off.title')));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.email_off.body', { siteName: 'Shop', serviceName: 'Acme ID' })));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.category_off.explain', { siteName: 'Shop', category })));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.mute.explain', { siteName: 'Shop' })));
        expect(posts(page.html)).to.deep.equal([
          [base.action, 'category_off', escapeHtml(t(locale, 'unsubscribe.category_off.submit')), 'secondary'],
          [base.action, 'mute', escapeHtml(t(locale, 'unsubscribe.mute.submit', { siteName: 'Shop' })), 'secondary'],
        ]);
      });

      it(`category_off and muted: confirm, no forms (${locale})`, () => {
        const off = unsubscribePage({ ...base, locale, category: 'promotions', state: { kind: 'done', did: 'category_off' } });
        expect(h1(off.html)).to.equal(escapeHtml(t(locale, 'unsubscribe.category_off.title')));
        expect(off.html).to.include(escapeHtml(t(locale, 'unsubscribe.category_off.body', {
          siteName: 'Shop', category: t(locale, 'category.promotions'), serviceName: 'Acme ID',
        })));
        expect(forms(off.html)).to.deep.equal([]);

        const muted = unsubscribePage({ ...base, locale, state: { kind: 'done', did: 'muted' } });
        expect(h1(muted.html)).to.equal(escapeHtml(t(locale, 'unsubscribe.muted.title', { siteName: 'Shop' })));
        expect(muted.html).to.include(escapeHtml(t(locale, 'unsubscribe.muted.body', { siteName: 'Shop', serviceName: 'Acme ID' })));
        expect(forms(muted.html)).to.deep.equal([]);
        for (const page of [off, muted]) expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.undo')));
      });
    }

    it('says in English what stays and what stops', () => {
      const page = unsubscribePage({ ...base, state: { kind: 'done', did: 'email_off' } });
      expect(page.html).to.include('You will no longer get these emails from Shop. They still arrive in your Acme ID account.');
      expect(page.html).to.include('Other categories are not affected.');
      expect(page.html).to.include('You can still sign in to Shop.');
    });
  });

  describe('invalid', () => {
    for (const locale of LOCALES) {
      it(`says the link is not valid, links the console and has no forms (${locale})`, () => {
        const page = unsubscribePage({ ...base, locale, siteName: 'Secret Shop', state: { kind: 'invalid' } });
        expect(h1(page.html)).to.equal(escapeHtml(t(locale, 'unsubscribe.invalid.title')));
        expect(page.html).to.include(escapeHtml(t(locale, 'unsubscribe.invalid.body')));
        expect(forms(page.html)).to.deep.equal([]);
        expect(page.html).to.not.include('Secret Shop');
        expect(page.csp).to.include("form-action 'self';");
      });
    }

    it('reads "This link is not valid (anymore)" in English', () => {
      expect(h1(unsubscribePage({ ...base, state: { kind: 'invalid' } }).html)).to.equal('This link is not valid (anymore)');
    });
  });

  describe('escaping', () => {
    for (const { name, state } of STATES) {
      it(`escapes a hostile site name, service name, action and console URL (${name})`, () => {
        const page = unsubscribePage({
          ...base,
          state,
          siteName: HOSTILE,
          serviceName: HOSTILE,
          action: `https://id.example/unsubscribe/${BREAKOUT}`,
          consoleUrl: `https://id.example/console${BREAKOUT}`,
        });
        expect(page.html).to.not.include('<script');
        expect(page.html).to.not.include('<img');
        expect(page.html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
        for (const form of forms(page.html)) {
          expect(form.attrs.action).to.equal('https://id.example/unsubscribe/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
        }
        expect(links(page.html).at(-1)?.href).to.equal('https://id.example/console&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
        expect(page.csp).to.not.include('onerror');
        expect(page.csp.split('; ')).to.have.length(6);
      });
    }

    it('keeps a relative action exact', () => {
      const page = unsubscribePage({ ...base, action: '/unsubscribe/a&b', state: { kind: 'done', did: 'email_off' } });
      expect(forms(page.html).map((f) => f.attrs.action)).to.deep.equal(['/unsubscribe/a&amp;b', '/unsubscribe/a&amp;b']);
      expect(page.csp).to.include("form-action 'self';");
    });
  });
});
