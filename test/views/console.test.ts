import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import { PAGE_STYLE, PAGE_STYLE_HASH, renderPage } from '../../views/layout.ts';
import { blockConfirmPage, consolePage } from '../../views/console.ts';
import type {
  Category,
  ConsoleMessageView,
  ConsoleNotice,
  ConsolePageInput,
  ConsoleSenderView,
  ConsoleSiteView,
  Delivery,
} from '../../views/console.ts';
import { orgPage, removeMemberConfirmPage } from '../../views/console/org.ts';
import type { OrgMemberView } from '../../views/console/org.ts';

const SCRIPT = '<script>alert(1)</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const HOSTILE = `${SCRIPT}${BREAKOUT}`;
const ESCAPED_SCRIPT = '&lt;script&gt;alert(1)&lt;/script&gt;';
const ESCAPED_BREAKOUT = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;';
const DIR: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', de: 'ltr', fr: 'ltr', ar: 'rtl' };
const CATEGORIES: Category[] = ['transactional', 'product', 'promotions'];
const DELIVERIES: Delivery[] = ['account_and_email', 'account', 'off'];
const NOTICES: ConsoleNotice[] = ['blocked', 'unblocked', 'access_removed', 'all_access_removed', 'saved', 'deleted', 'read', 'language'];
const CSP = `default-src 'none'; style-src 'sha256-${PAGE_STYLE_HASH}'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
const LOGO = 'data:image/png;base64,iVBORw0KGgo=';

/* ---------- A tiny HTML reader, as in the other view tests ---------- */

type Tag = { raw: string; attrs: Record<string, string> };
type Form = { raw: string; attrs: Record<string, string>; body: string; inputs: Tag[]; buttons: { attrs: Record<string, string>; text: string }[] };

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/\s([a-z-]+)(?:="([^"]*)")?/g)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

function tags(source: string, name: string): Tag[] {
  return [...source.matchAll(new RegExp(`<${name}\\b[^>]*>`, 'g'))].map((m) => ({ raw: m[0], attrs: attrs(m[0]) }));
}

function forms(source: string): Form[] {
  return [...source.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map((m) => ({
    raw: m[0],
    attrs: attrs(m[1] ?? ''),
    body: m[2] ?? '',
    inputs: tags(m[2] ?? '', 'input'),
    buttons: [...(m[2] ?? '').matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].map((b) => ({ attrs: attrs(b[1] ?? ''), text: b[2] ?? '' })),
  }));
}

function links(source: string): { attrs: Record<string, string>; text: string }[] {
  return [...source.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/g)].map((m) => ({ attrs: attrs(m[1] ?? ''), text: m[2] ?? '' }));
}

/** Text without tags and with entities decoded (enough for these pages). */
function text(source: string): string {
  return source
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

function count(source: string, pattern: RegExp): number {
  return [...source.matchAll(pattern)].length;
}

/** The element with this id, up to its matching close tag (no nesting of the same tag inside). */
function element(source: string, tag: string, id: string): string {
  const m = source.match(new RegExp(`<${tag}\\b[^>]*\\bid="${id}"[^>]*>[\\s\\S]*?</${tag}>`));
  expect(m, `<${tag} id="${id}">`).to.not.equal(null);
  return m?.[0] ?? '';
}

/** The <li class="cls ..."> items of a list, each up to the next one (or the end of the list). */
function items(source: string, cls: string): string[] {
  const start = new RegExp(`<li class="${cls}\\b`);
  return source.split(new RegExp(`(?=<li class="${cls}\\b)`)).filter((part) => start.test(part));
}

function messages(source: string): string[] {
  return [...source.matchAll(/<article\b[\s\S]*?<\/article>/g)].map((m) => m[0]);
}

function styleHash(page: string): string {
  const style = page.match(/<style>([\s\S]*?)<\/style>/)?.[1] ?? '';
  return createHash('sha256').update(style, 'utf8').digest('base64');
}

/** What every console page must be: a complete, script-free document with CSRF in every form. */
function expectCommonPage(page: { html: string; csp: string }, locale: Locale, csrf = 'tok'): void {
  expect(page.html).to.match(/^<!doctype html>\n<html /);
  expect(page.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
  expect(page.html).to.include('<main id="main"');
  expect(count(page.html, /<h1\b/g)).to.equal(1);
  expect(count(page.html, /<style\b/g)).to.equal(1);
  expect(page.html).to.not.match(/<script\b/i);
  expect(page.html).to.not.match(/<link\b/i);
  expect(page.html).to.not.match(/\sstyle="/i);
  for (const tag of page.html.matchAll(/<[a-z][a-z0-9]*\b[^>]*>/gi)) {
    expect(Object.keys(attrs(tag[0])).filter((a) => a.startsWith('on')), tag[0]).to.deep.equal([]);
  }
  expect(styleHash(page.html)).to.equal(PAGE_STYLE_HASH);
  expect(page.csp).to.equal(CSP);
  for (const form of forms(page.html)) {
    expect(form.attrs.method, form.raw).to.equal('post');
    const hidden = form.inputs.filter((i) => i.attrs.type === 'hidden');
    expect(hidden.map((i) => i.attrs), form.raw).to.deep.equal([{ type: 'hidden', name: 'csrf', value: csrf }]);
  }
  // Every visible control has a label; every id is unique.
  const ids = [...page.html.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1]);
  expect(new Set(ids).size, 'unique ids').to.equal(ids.length);
  for (const input of [...tags(page.html, 'input'), ...tags(page.html, 'select')].filter((i) => i.attrs.type !== 'hidden')) {
    expect(page.html, input.raw).to.include(`<label for="${input.attrs.id}">`);
  }
  // Links that open a new tab never hand over the opener or the referrer.
  for (const a of links(page.html).filter((l) => l.attrs.target === '_blank')) {
    expect(a.attrs.rel).to.equal('noopener noreferrer');
  }
}

/* ---------- Sample data ---------- */

const T1 = Date.UTC(2025, 0, 12, 9, 30);
const T2 = Date.UTC(2026, 2, 2, 18, 5);

function site(over: Partial<ConsoleSiteView> = {}): ConsoleSiteView {
  return {
    clientId: 'shop',
    name: 'Book Shop',
    uri: 'https://shop.example/',
    logoUri: 'https://shop.example/logo.png',
    firstSignInAt: T1,
    lastSignInAt: T2,
    scopes: ['openid', 'email'],
    offlineAccess: false,
    status: 'connected',
    ...over,
  };
}

function sender(over: Partial<ConsoleSenderView> = {}): ConsoleSenderView {
  return {
    clientId: 'shop',
    name: 'Book Shop',
    logoUri: null,
    muted: false,
    categories: { transactional: 'account_and_email', product: 'account', promotions: 'off' },
    ...over,
  };
}

function message(over: Partial<ConsoleMessageView> = {}): ConsoleMessageView {
  return {
    id: 'm1',
    clientId: 'shop',
    siteName: 'Book Shop',
    logoUri: null,
    category: 'transactional',
    title: 'Your order has shipped',
    body: 'Hello,\nyour order is on its way.',
    url: 'https://shop.example/orders/1',
    receivedAt: Date.UTC(2026, 2, 3, 10, 12),
    read: false,
    ...over,
  };
}

function input(over: Partial<ConsolePageInput> = {}): ConsolePageInput {
  return {
    locale: 'en',
    serviceName: 'Example ID',
    accountEmail: 'ann@example.com',
    csrf: 'tok',
    sites: [
      site(),
      site({ clientId: 'news', name: 'Daily News', uri: null, logoUri: null, scopes: ['openid', 'profile', 'orders:read'], offlineAccess: true }),
      site({ clientId: 'game', name: 'Games', status: 'blocked', blockedAt: Date.UTC(2026, 0, 5, 8, 15) }),
    ],
    senders: [
      sender(),
      sender({ clientId: 'news', name: 'Daily News', muted: true, categories: { transactional: 'account', product: 'off', promotions: 'account_and_email' } }),
    ],
    inbox: {
      items: [
        message(),
        message({ id: 'm2', clientId: 'news', siteName: 'Daily News', category: 'product', title: 'News', body: 'Read it.', url: null, receivedAt: Date.UTC(2026, 2, 1, 8, 0), read: true }),
      ],
      unread: 1,
      next: null,
      cursor: null,
    },
    adminOf: [],
    ...over,
  };
}

/* ---------- consolePage ---------- */

describe('consolePage', () => {
  describe('every locale', () => {
    for (const locale of LOCALES) {
      it(`renders in ${locale}`, () => {
        const page = consolePage(input({ locale, adminOf: [{ id: 'acme', name: 'Acme' }], notice: 'saved' }));
        expectCommonPage(page, locale);
        expect(page.html).to.include(`<h1>${t(locale, 'console.title')}</h1>`);
        expect(page.html).to.include(`<title>${t(locale, 'console.title')} — Example ID</title>`);
        expect(page.html).to.include('<body class="wide">');
        for (const id of ['sites', 'senders', 'inbox', 'language', 'orgs']) {
          expect(page.html).to.match(new RegExp(`<section id="${id}" class="card" aria-labelledby="${id}-title">`));
          expect(page.html).to.match(new RegExp(`<h2 id="${id}-title">`));
          expect(tags(page.html, 'a').map((a) => a.attrs.href)).to.include(`#${id}`);
        }
        expect(page.html).to.include(`<nav class="toc" aria-label="${t(locale, 'console.nav.label')}">`);
        for (const category of CATEGORIES) expect(page.html).to.include(`<legend>${t(locale, `category.${category}`)}</legend>`);
        for (const delivery of DELIVERIES) expect(page.html).to.include(`>${t(locale, `console.delivery.${delivery}`)}</label>`);
        // The notice sits in the section that changed (Senders), as the page's #notice target.
        expect(element(page.html, 'section', 'senders')).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t(locale, 'console.notice.saved')}</p>`);
        expect(text(page.html)).to.include(`${t(locale, 'console.inbox.title')} ${t(locale, 'console.inbox.unread_count', { count: 1 })}`);
      });
    }
  });

  it('has one h1 and h2 sections with h3 items, and landmarks', () => {
    const page = consolePage(input()).html;
    expect(count(page, /<h1\b/g)).to.equal(1);
    // Connected sites, Senders, Messages, Devices, Language
    expect(count(page, /<h2\b/g)).to.equal(5);
    // 3 sites, 2 senders, 2 messages
    expect(count(page, /<h3\b/g)).to.equal(7);
    expect(page).to.match(/<header class="site-header has-aside">/);
    expect(page).to.match(/<footer class="site-footer">/);
  });

  it('shows who is signed in, with a sign-out link', () => {
    const page = consolePage(input()).html;
    expect(page).to.include('<span class="who">Signed in as <strong><bdi>ann@example.com</bdi></strong></span><a href="/session/end">Sign out</a>');
    const without = consolePage(input({ accountEmail: undefined })).html;
    expect(without).to.not.include('Signed in as');
    expect(without).to.include('<a href="/session/end">Sign out</a>');
  });

  it('has exactly these forms, each with the CSRF token', () => {
    const page = consolePage(input());
    const all = forms(page.html).map((f) => [
      f.attrs.action,
      f.inputs.filter((i) => i.attrs.type !== 'hidden').map((i) => `${i.attrs.type}:${i.attrs.name}=${i.attrs.value}${'checked' in i.attrs ? '*' : ''}`),
      f.buttons.map((b) => text(b.text)),
    ]);
    const radios = (current: Record<Category, Delivery>) =>
      CATEGORIES.flatMap((c) => DELIVERIES.map((d) => `radio:${c}=${d}${current[c] === d ? '*' : ''}`));
    expect(all).to.deep.equal([
      ['/console/sites/game/unblock', [], ['Unblock Games']],
      ['/console/senders/shop', ['checkbox:muted=on', ...radios({ transactional: 'account_and_email', product: 'account', promotions: 'off' })], ['Save']],
      ['/console/senders/news', ['checkbox:muted=on*', ...radios({ transactional: 'account', product: 'off', promotions: 'account_and_email' })], ['Save']],
      ['/console/inbox/m1/read', [], ['Mark as read']],
      ['/console/inbox/m1/delete', [], ['Delete']],
      ['/console/inbox/m2/delete', [], ['Delete']],
      ['/console/language', [], ['Save']],
    ]);
    expect(page.csp).to.include("form-action 'self';");
  });

  describe('connected sites', () => {
    it('shows logo, name, dates, access in words and status', () => {
      const page = consolePage(input()).html;
      const [shop = '', news = '', game = ''] = items(element(page, 'section', 'sites'), 'tile');
      expect(shop).to.include('<a href="https://shop.example/" rel="noopener noreferrer" target="_blank"><bdi>Book Shop</bdi><span class="visually-hidden"> (opens in a new tab)</span></a>');
      expect(shop).to.include('<p class="host">shop.<wbr>example</p>');
      expect(shop).to.include('<img class="logo logo-md" src="https://shop.example/logo.png" alt="" width="44" height="44" referrerpolicy="no-referrer"');
      expect(shop).to.include('<dt>First signed in</dt><dd><time datetime="2025-01-12T09:30:00.000Z">Jan 12, 2025, 9:30 AM</time></dd>');
      expect(shop).to.include('<dt>Last signed in</dt><dd><time datetime="2026-03-02T18:05:00.000Z">Mar 2, 2026, 6:05 PM</time></dd>');
      expect(shop).to.include('<li class="chip">Your identity</li><li class="chip">Your email address</li>');
      expect(shop).to.not.include('Can act while you are signed out');
      expect(shop).to.include('<span class="badge badge-ok">Connected</span>');
      expect(shop).to.include('<dt>Last used</dt><dd>Not yet</dd>');
      expect(links(shop).map((l) => [l.attrs.href, text(l.text)])).to.deep.equal([
        ['https://shop.example/', 'Book Shop (opens in a new tab)'],
        ['/console/sites/shop', 'About Book Shop'],
        ['/console/sites/shop/remove-access', 'Remove access of Book Shop…'],
        ['/console/sites/shop/block', 'Block Book Shop…'],
      ]);
      expect(forms(shop)).to.have.length(0);

      // No https uri: the name is not a link; unknown scopes as code; offline access once.
      expect(news).to.include('<h3 id="site-1"><bdi>Daily News</bdi></h3>');
      expect(news).to.include('<li class="chip">Your profile</li><li class="chip"><code>orders:read</code></li><li class="chip chip-warn">Can act while you are signed out</li>');
      expect(count(news, /Can act while you are signed out/g)).to.equal(1);

      expect(game).to.include('<span class="badge badge-danger">Blocked</span>');
      expect(game).to.include('Blocked on <time datetime="2026-01-05T08:15:00.000Z">Jan 5, 2026, 8:15 AM</time>');
      expect(links(game).map((l) => l.attrs.href).slice(0, 2)).to.deep.equal(['https://shop.example/', '/console/sites/game']);
      expect(forms(game).map((f) => f.attrs.action)).to.deep.equal(['/console/sites/game/unblock']);
    });

    it('shows offline_access from either source once', () => {
      for (const over of [{ offlineAccess: true }, { scopes: ['openid', 'offline_access'] }, { scopes: ['offline_access'], offlineAccess: true }]) {
        const page = consolePage(input({ sites: [site(over)] })).html;
        expect(count(page, /Can act while you are signed out/g)).to.equal(1);
        expect(page).to.not.include('<code>offline_access</code>');
      }
    });

    it('links a site only to an https uri', () => {
      for (const uri of ['http://shop.example/', 'javascript:alert(1)', 'data:text/html,x', '//shop.example', 'not a url', '/relative']) {
        const page = consolePage(input({ sites: [site({ uri })], inbox: { items: [], unread: 0, next: null, cursor: null } })).html;
        expect(links(element(page, 'section', 'sites')).map((l) => l.attrs.href), uri).to.deep.equal(['/console/sites/shop', '/console/sites/shop/remove-access', '/console/sites/shop/block', '/console/remove-access']);
      }
    });

    it('encodes client ids in the routes', () => {
      const page = consolePage(input({ sites: [site({ clientId: 'a/b?c#d' }), site({ clientId: 'x y', status: 'blocked', blockedAt: T2 })] })).html;
      expect(tags(page, 'a').map((a) => a.attrs.href)).to.include('/console/sites/a%2Fb%3Fc%23d/block');
      expect(forms(page).map((f) => f.attrs.action)).to.include('/console/sites/x%20y/unblock');
    });

    it('has an empty state', () => {
      const page = consolePage(input({ sites: [] })).html;
      expect(element(page, 'section', 'sites')).to.include('<p class="empty">You have not signed in to any site with your Example ID account yet.</p>');
    });
  });

  describe('logos', () => {
    function logoOf(logoUri: string | null): string {
      const page = consolePage(input({ sites: [site({ logoUri, name: 'zed' })], senders: [], inbox: { items: [], unread: 0, next: null, cursor: null } })).html;
      return element(page, 'section', 'sites');
    }

    it('renders https and data: image logos as decorative images', () => {
      expect(logoOf('https://cdn.example/a b.png')).to.include('<img class="logo logo-md" src="https://cdn.example/a%20b.png" alt="" width="44" height="44" referrerpolicy="no-referrer" loading="lazy" decoding="async">');
      expect(logoOf(LOGO)).to.include(`<img class="logo logo-md" src="${LOGO}" alt=""`);
    });

    it('falls back to a letter avatar for anything else', () => {
      for (const logoUri of [null, '', 'http://cdn.example/a.png', 'javascript:alert(1)', 'data:text/html,<script>x</script>', '/logo.png', '//cdn.example/a.png', `https://x.example/${BREAKOUT}`.replace('https', 'ftp')]) {
        const section = logoOf(logoUri);
        expect(section, String(logoUri)).to.not.include('<img');
        expect(section, String(logoUri)).to.match(/<span class="logo logo-md avatar av-\d" aria-hidden="true">Z<\/span>/);
      }
    });

    it('escapes a hostile https logo URL', () => {
      const section = logoOf(`https://x.example/${BREAKOUT}`);
      expect(tags(section, 'img')).to.have.length(1);
      expect(tags(section, 'img')[0]?.attrs.src).to.equal('https://x.example/%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E');
    });

    it('avatars use the first letter of the name, any script', () => {
      const page = consolePage(input({ sites: [site({ logoUri: null, name: '  «مكتبة»' }), site({ logoUri: null, name: '' })] })).html;
      expect(page).to.match(/aria-hidden="true">م<\/span>/);
      expect(page).to.match(/aria-hidden="true">\?<\/span>/);
    });
  });

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

  describe('language', () => {
    for (const locale of LOCALES) {
      it(`offers the four languages, ${locale} selected`, () => {
        const page = consolePage(input({ locale })).html;
        const [form] = forms(page).filter((f) => f.attrs.action === '/console/language');
        expect(form?.body).to.include(`<label for="locale">${t(locale, 'console.language.label')}</label>`);
        expect(tags(form?.body ?? '', 'select').map((s) => [s.attrs.id, s.attrs.name])).to.deep.equal([['locale', 'locale']]);
        const options = [...(form?.body ?? '').matchAll(/<option\b([^>]*)>([^<]*)<\/option>/g)].map((m) => ({ attrs: attrs(m[1] ?? ''), text: m[2] }));
        expect(options.map((o) => [o.attrs.value, o.attrs.lang, o.text])).to.deep.equal([
          ['en', 'en', 'English'],
          ['de', 'de', 'Deutsch'],
          ['fr', 'fr', 'Français'],
          ['ar', 'ar', 'العربية'],
        ]);
        expect(options.filter((o) => 'selected' in o.attrs).map((o) => o.attrs.value)).to.deep.equal([locale]);
        expect(form?.buttons.map((b) => b.text)).to.deep.equal([t(locale, 'console.save')]);
      });
    }
  });

  describe('notices', () => {
    for (const locale of LOCALES) {
      it(`announces each notice politely in ${locale}`, () => {
        for (const notice of NOTICES) {
          const page = consolePage(input({ locale, notice })).html;
          expect(count(page, /role="status"/g)).to.equal(1);
          const section = { blocked: 'sites', unblocked: 'sites', access_removed: 'sites', all_access_removed: 'sites', saved: 'senders', deleted: 'inbox', read: 'inbox', language: 'language' }[notice];
          expect(element(page, 'section', section), notice).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t(locale, `console.notice.${notice}`)}</p>`);
        }
      });
    }

    it('has no status message without a notice', () => {
      expect(consolePage(input()).html).to.not.include('role="status"');
    });
  });

  describe('organizations', () => {
    it('links each organization the person belongs to, with their role there', () => {
      const page = consolePage(input({ adminOf: [{ id: 'acme', name: 'Acme', admin: true }, { id: 'a/b c', name: 'B & C', admin: false }, { id: 'old', name: 'Old', admin: false, removed: true }] })).html;
      const section = element(page, 'section', 'orgs');
      expect(section).to.include('<h2 id="orgs-title">Your organizations</h2>');
      expect(links(section).map((l) => [l.attrs.href, l.text])).to.deep.equal([
        ['/console/orgs/acme', '<span><bdi>Acme</bdi></span> <span class="badge badge-accent">Administrator</span>'],
        ['/console/orgs/a%2Fb%20c', '<span><bdi>B &amp; C</bdi></span> <span class="badge badge-neutral">Member</span>'],
        ['/console/orgs/old', '<span><bdi>Old</bdi></span> <span class="badge badge-danger">Removed</span>'],
      ]);
    });

    it('has no organizations section for others', () => {
      const page = consolePage(input()).html;
      expect(page).to.not.include('id="orgs"');
      expect(page).to.not.include('href="#orgs"');
      expect(page).to.not.include('/console/orgs/');
    });
  });

  it('escapes hostile names, titles, bodies, emails, ids and tokens', () => {
    const page = consolePage({
      locale: 'en',
      serviceName: HOSTILE,
      accountEmail: HOSTILE,
      csrf: HOSTILE,
      sites: [site({ clientId: HOSTILE, name: HOSTILE, uri: `https://x.example/${BREAKOUT}`, scopes: [HOSTILE] }), site({ name: HOSTILE, status: 'blocked', blockedAt: T2 })],
      senders: [sender({ clientId: HOSTILE, name: HOSTILE })],
      inbox: { items: [message({ id: HOSTILE, siteName: HOSTILE, title: HOSTILE, body: HOSTILE, url: `https://x.example/${BREAKOUT}` })], unread: 1, next: HOSTILE, cursor: HOSTILE },
      adminOf: [{ id: HOSTILE, name: HOSTILE }],
    });
    expectCommonPage(page, 'en', `${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}`);
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.not.include(BREAKOUT);
    expect(page.html).to.not.match(/<img src=x/);
    expect(page.html).to.include(`${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}`);
    expect(page.html).to.include(`<span class="who">Signed in as <strong><bdi>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</bdi></strong></span>`);
    expect(page.html).to.include(`<h3 id="msg-0" class="message-title" dir="auto">${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</h3>`);
    const enc = encodeURIComponent(HOSTILE);
    expect(forms(page.html).map((f) => f.attrs.action)).to.include.members([
      `/console/senders/${enc}`,
      `/console/inbox/${enc}/read`,
      `/console/inbox/${enc}/delete`,
    ]);
    expect(tags(page.html, 'a').map((a) => a.attrs.href)).to.include.members([
      `/console/sites/${enc}/block`,
      `/console/orgs/${enc}`,
      `/console?cursor=${enc}#inbox`,
      'https://x.example/%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E',
    ]);
  });
});

/* ---------- blockConfirmPage ---------- */

describe('blockConfirmPage', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = blockConfirmPage({ locale, serviceName: 'Example ID', csrf: 'tok', site: site() });
      expectCommonPage(page, locale);
      expect(page.html).to.include(`<title>${t(locale, 'console.block.title', { siteName: 'Book Shop' })} — Example ID</title>`);
      expect(page.html).to.include(`<h1>${t(locale, 'console.block.title').replace('{siteName}', '<bdi>Book Shop</bdi>')}</h1>`);
      for (const key of ['console.block.access', 'console.block.signin', 'console.block.messages', 'console.block.ask'] as const) {
        expect(page.html).to.include(`<li>${t(locale, key).replace(/\{siteName\}/g, '<bdi>Book Shop</bdi>')}</li>`);
      }
      expect(page.html).to.not.include('<body class="wide">');
    });
  }

  it('says what happens, and has one danger form and a Cancel link', () => {
    const page = blockConfirmPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', site: site({ clientId: 'a/b' }), accountEmail: 'ann@example.com' });
    expect(text(page.html)).to.include(
      'This is what happens when you block Book Shop: Book Shop loses its access to your account at once and is signed out. ' +
      'Book Shop can no longer sign you in or get tokens for your account. Book Shop cannot send you messages. ' +
      'If Book Shop sends you here to sign in, you will be asked whether to unblock it.',
    );
    const all = forms(page.html);
    expect(all.map((f) => [f.attrs.action, f.buttons.map((b) => [b.attrs.class, text(b.text)])])).to.deep.equal([
      ['/console/sites/a%2Fb/block', [['danger', 'Block Book Shop']]],
    ]);
    const cancel = links(page.html).find((l) => l.text === 'Cancel');
    expect(cancel?.attrs).to.deep.equal({ class: 'button secondary', href: '/console#sites' });
    expect(page.html).to.include('Signed in as <strong><bdi>ann@example.com</bdi></strong>');
    expect(page.html).to.include('<a href="/session/end">Sign out</a>');
  });

  it('escapes a hostile site name', () => {
    const page = blockConfirmPage({ locale: 'en', serviceName: 'S', csrf: 'tok', site: site({ name: HOSTILE, logoUri: 'javascript:alert(1)' }) });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include(`Block <bdi>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</bdi>`);
    expect(page.html).to.include(`<title>Block ${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}? — S</title>`);
  });
});

/* ---------- orgPage and removeMemberConfirmPage ---------- */

const MEMBERS: OrgMemberView[] = [
  { accountId: 'a1', email: 'ann@example.com', admin: true, status: 'member' },
  { accountId: 'a2', email: 'bob@example.com', admin: false, status: 'member' },
  { accountId: 'a/3', email: null, admin: false, status: 'member' },
  { accountId: 'a4', email: 'carol@example.com', admin: false, status: 'removed', removedAt: Date.UTC(2026, 1, 11, 13, 0) },
];
const ORG = { id: 'acme', name: 'Acme Corp' };

function rows(source: string): string[] {
  return [...(source.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '').matchAll(/<tr\b[\s\S]*?<\/tr>/g)].map((m) => m[0]);
}

describe('orgPage', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = orgPage({ locale, serviceName: 'Example ID', csrf: 'tok', org: ORG, members: MEMBERS, notice: 'removed' });
      expectCommonPage(page, locale);
      expect(page.html).to.include('<h1><bdi>Acme Corp</bdi></h1>');
      expect(page.html).to.include(`<title>${t(locale, 'console.org.title', { orgName: 'Acme Corp' })} — Example ID</title>`);
      expect(page.html).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t(locale, 'console.org.notice.removed')}</p>`);
      expect(rows(page.html)).to.have.length(4);
      for (const key of ['console.org.member', 'console.org.role', 'console.org.status'] as const) {
        expect(page.html).to.include(`<th scope="col">${t(locale, key)}</th>`);
      }
    });
  }

  it('lists members with role and status, and a remove link for current non-admin members only', () => {
    const page = orgPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', org: ORG, members: MEMBERS }).html;
    const [ann, bob, anon, carol] = rows(page);
    expect(ann).to.include('<th scope="row"><bdi>ann@example.com</bdi></th>');
    expect(ann).to.include('Administrator');
    expect(ann).to.include('Active');
    expect(links(ann ?? '')).to.have.length(0);
    expect(bob).to.include('<span class="badge badge-neutral">Member</span>');
    expect(links(bob ?? '').map((l) => [l.attrs.href, text(l.text)])).to.deep.equal([
      ['/console/orgs/acme/members/a2/remove', 'Remove bob@example.com'],
    ]);
    expect(anon).to.include('<th scope="row"><code>a/3</code></th>');
    expect(links(anon ?? '').map((l) => l.attrs.href)).to.deep.equal(['/console/orgs/acme/members/a%2F3/remove']);
    expect(carol).to.include('Removed');
    expect(carol).to.include('on <time datetime="2026-02-11T13:00:00.000Z">Feb 11, 2026, 1:00 PM</time>');
    expect(links(carol ?? '')).to.have.length(0);
    expect(forms(page)).to.have.length(0);
    expect(page).to.not.include('role="status"');
    expect(page).to.include('<a href="/console">Back to your console</a>');
    expect(page).to.include('<li><span aria-current="page"><bdi>Acme Corp</bdi></span></li>');
    expect(page).to.include('<li><a href="/console">Your console</a></li>');
  });

  it('has an empty state', () => {
    const page = orgPage({ locale: 'en', serviceName: 'S', csrf: 'tok', org: ORG, members: [] }).html;
    expect(page).to.include('<p class="empty">This organization has no members.</p>');
    expect(page).to.not.include('<table');
  });

  it('escapes hostile org names, emails and ids', () => {
    const page = orgPage({
      locale: 'en', serviceName: HOSTILE, csrf: HOSTILE, accountEmail: HOSTILE,
      org: { id: HOSTILE, name: HOSTILE },
      members: [{ accountId: HOSTILE, email: HOSTILE, admin: false, status: 'member' }, { accountId: HOSTILE, email: null, admin: false, status: 'member' }],
    });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include(`<h1><bdi>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</bdi></h1>`);
    const enc = encodeURIComponent(HOSTILE);
    expect(tags(page.html, 'a').map((a) => a.attrs.href)).to.include(`/console/orgs/${enc}/members/${enc}/remove`);
  });
});

describe('removeMemberConfirmPage', () => {
  const member = MEMBERS[1] as OrgMemberView;

  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = removeMemberConfirmPage({ locale, serviceName: 'Example ID', csrf: 'tok', org: ORG, member });
      expectCommonPage(page, locale);
      expect(page.html).to.include(`<title>${t(locale, 'console.remove.title', { member: 'bob@example.com', orgName: 'Acme Corp' })} — Example ID</title>`);
      for (const key of ['console.remove.access', 'console.remove.tokens', 'console.remove.signin'] as const) {
        expect(page.html).to.include(`<li>${t(locale, key).replace('{orgName}', '<bdi>Acme Corp</bdi>')}</li>`);
      }
    });
  }

  it('explains the consequences, with one danger form and a Cancel link', () => {
    const page = removeMemberConfirmPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', org: { id: 'a/b', name: 'Acme Corp' }, member: { ...member, accountId: 'x y' } });
    expect(text(page.html)).to.include(
      'They lose access to the sites of Acme Corp at once: their sessions at those sites end. ' +
      'Their refresh tokens for the sites of Acme Corp stop working. They cannot sign in to the sites of Acme Corp again.',
    );
    expect(forms(page.html).map((f) => [f.attrs.action, f.buttons.map((b) => [b.attrs.class, text(b.text)])])).to.deep.equal([
      ['/console/orgs/a%2Fb/members/x%20y/remove', [['danger', 'Remove bob@example.com']]],
    ]);
    expect(links(page.html).find((l) => l.text === 'Cancel')?.attrs).to.deep.equal({ class: 'button secondary', href: '/console/orgs/a%2Fb' });
  });

  it('names a member without email by account id, escaped', () => {
    const page = removeMemberConfirmPage({ locale: 'en', serviceName: 'S', csrf: 'tok', org: ORG, member: { accountId: HOSTILE, email: null, admin: false, status: 'member' } });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.include(`<h1>Remove <code>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</code> from <bdi>Acme Corp</bdi>?</h1>`);
  });
});

/* ---------- The layout's wide mode leaves the other pages alone ---------- */

describe('renderPage wide and headerAside', () => {
  it('keeps the narrow page as it was', () => {
    const page = renderPage({ locale: 'en', title: 'x', main: html`<h1>x</h1>`, serviceName: 'S' }).html;
    expect(page).to.include('<body>\n<a class="skip" href="#main">Skip to main content</a>\n<header class="site-header">S</header>\n<main id="main" tabindex="-1">');
  });

  it('adds the wide class and the header aside', () => {
    const page = renderPage({ locale: 'en', title: 'x', main: html`<h1>x</h1>`, serviceName: 'S<', wide: true, headerAside: html`<span class="account">A</span>` }).html;
    expect(page).to.include('<body class="wide">');
    expect(page).to.include('<header class="site-header has-aside"><span class="brand">S&lt;</span><span class="account">A</span></header>');
  });
});
