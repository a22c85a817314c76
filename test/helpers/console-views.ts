/**
 * The console's pages as their view tests read them: where a section or an
 * item is, what every console page must be, and sample data.
 */
import { expect } from 'chai';

import type { Locale } from '../../src/i18n/index.ts';
import { PAGE_STYLE_HASH } from '../../views/layout.ts';
import type {
  Category,
  ConsoleMessageView,
  ConsolePageInput,
  ConsoleSenderView,
  ConsoleSiteView,
  Delivery,
} from '../../views/console.ts';
import { attrs, count, DIR, forms, links, styleHash, tags } from './html.ts';

export const CATEGORIES: Category[] = ['transactional', 'product', 'promotions'];
export const DELIVERIES: Delivery[] = ['account_and_email', 'account', 'off'];
const CSP = `default-src 'none'; style-src 'sha256-${PAGE_STYLE_HASH}'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** The element with this id, up to its matching close tag (no nesting of the same tag inside). */
export function element(source: string, tag: string, id: string): string {
  const m = source.match(new RegExp(`<${tag}\\b[^>]*\\bid="${id}"[^>]*>[\\s\\S]*?</${tag}>`));
  expect(m, `<${tag} id="${id}">`).to.not.equal(null);
  return m?.[0] ?? '';
}

/** The <li class="cls ..."> items of a list, each up to the next one (or the end of the list). */
export function items(source: string, cls: string): string[] {
  const start = new RegExp(`<li class="${cls}\\b`);
  return source.split(new RegExp(`(?=<li class="${cls}\\b)`)).filter((part) => start.test(part));
}

export function messages(source: string): string[] {
  return [...source.matchAll(/<article\b[\s\S]*?<\/article>/g)].map((m) => m[0]);
}

/** What every console page must be: a complete, script-free document with CSRF in every form. */
export function expectConsolePage(page: { html: string; csp: string }, locale: Locale, csrf = 'tok'): void {
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

export const T1 = Date.UTC(2025, 0, 12, 9, 30);
export const T2 = Date.UTC(2026, 2, 2, 18, 5);

export function site(over: Partial<ConsoleSiteView> = {}): ConsoleSiteView {
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

export function sender(over: Partial<ConsoleSenderView> = {}): ConsoleSenderView {
  return {
    clientId: 'shop',
    name: 'Book Shop',
    logoUri: null,
    muted: false,
    categories: { transactional: 'account_and_email', product: 'account', promotions: 'off' },
    ...over,
  };
}

export function message(over: Partial<ConsoleMessageView> = {}): ConsoleMessageView {
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

export function input(over: Partial<ConsolePageInput> = {}): ConsolePageInput {
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
