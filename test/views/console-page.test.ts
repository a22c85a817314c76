/** The console page as a whole: every locale, its structure and forms, language, notices, organizations, escaping. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { consolePage, type Category, type ConsoleNotice, type Delivery } from '../../views/console.ts';
import { CATEGORIES, DELIVERIES, element, expectConsolePage, input, message, sender, site, T2 } from '../helpers/console-views.ts';
import { attrs, BREAKOUT, count, ESCAPED_BREAKOUT, ESCAPED_SCRIPT, forms, HOSTILE, links, SCRIPT, tags, text } from '../helpers/html.ts';

const NOTICES: ConsoleNotice[] = ['blocked', 'unblocked', 'access_removed', 'all_access_removed', 'saved', 'deleted', 'read', 'language'];

describe('consolePage', () => {
  describe('every locale', () => {
    for (const locale of LOCALES) {
      it(`renders in ${locale}`, () => {
        const page = consolePage(input({ locale, adminOf: [{ id: 'acme', name: 'Acme' }], notice: 'saved' }));
        expectConsolePage(page, locale);
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
    expectConsolePage(page, 'en', `${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}`);
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
