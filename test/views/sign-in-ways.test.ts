/**
 * The pages of passkeys and social sign-in (issue 15): what each offers with
 * and without JavaScript, their CSP (the passkey script by its exact URL, no
 * inline script), and everything a person or an upstream wrote escaped.
 */
import { expect } from 'chai';

import { hostSections } from '../../src/console/sections.ts';
import { t } from '../../src/i18n/index.ts';
import { consolePage } from '../../views/console.ts';
import { linkedAccountsSection } from '../../examples/reference/views/console/linked-accounts.ts';
import { passkeyRemovePage, passkeysSection } from '../../examples/reference/views/console/passkeys.ts';
import { linkFirstPage } from '../../examples/reference/views/interaction/link-first.ts';
import { loginPage } from '../../examples/reference/views/interaction/login.ts';
import { passkeySignUpPage } from '../../examples/reference/views/interaction/passkey-signup.ts';
import { buildCsp } from '../../views/layout.ts';
import { LOCALES } from '../../src/i18n/index.ts';
import { expectCommonPage, forms, text } from '../helpers/html.ts';

const HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(1)>';
const SCRIPT = 'https://id.example/assets/passkeys-abc.js';

function expectEscaped(html: string): void {
  expect(html).to.not.include('<script>alert(1)');
  expect(html).to.not.include('<img src=x');
  expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
}

function scriptSrc(csp: string): string | undefined {
  return csp.split('; ').find((d) => d.startsWith('script-src '));
}

describe('the login page with passkeys and upstreams', () => {
  const base = {
    locale: 'en' as const, serviceName: 'Acme ID', action: '/interaction/u1/email', csrf: 'tok',
    passkeys: { script: SCRIPT, optionsAction: '/interaction/u1/passkey/options', action: '/interaction/u1/passkey', signUpHref: '/interaction/u1/passkey/new', rpId: 'id.example' },
    upstreams: [{ name: 'Social', action: '/interaction/u1/upstream/social' }],
    formAction: ['https://site.example/cb', 'https://accounts.social.example'],
  };

  it('offers the address first, then the passkey (hidden until the script finds WebAuthn) and each upstream (a plain form)', () => {
    const page = loginPage(base);
    const html = page.html;
    expect(html.indexOf('name="email"')).to.be.lessThan(html.indexOf('id="passkey-signin"'));
    expect(html).to.match(/<form id="passkey-signin" method="post" action="\/interaction\/u1\/passkey" [^>]*hidden data-passkey-hidden>/);
    expect(html).to.include('data-autofill').and.include('autocomplete="email webauthn"');
    expect(html).to.match(/<form method="post" action="\/interaction\/u1\/upstream\/social">\n<input type="hidden" name="csrf" value="tok">\n<button type="submit" class="secondary">Continue with Social<\/button>/);
    expect(html).to.match(/<p class="alt" hidden data-passkey-hidden><a href="\/interaction\/u1\/passkey\/new">/);
    expect(html).to.include(`<script src="${SCRIPT}" defer></script>`);
    expect(html).to.not.match(/<script>/);
    expect(scriptSrc(page.csp)).to.equal(`script-src ${SCRIPT}`);
    expect(page.csp).to.include("connect-src 'self'").and.include("form-action 'self' https://site.example https://accounts.social.example");
  });

  it('without passkeys or upstreams is the address form alone, with no script', () => {
    const page = loginPage({ ...base, passkeys: undefined, upstreams: [] });
    expect(page.html).to.include('autocomplete="email"');
    expect(page.html).to.not.include('<script').and.not.include('class="or"');
    expect(scriptSrc(page.csp)).to.equal(undefined);
    expect(page.csp).to.not.include('connect-src');
  });

  it('says a failure of another way at the top, announced, and then asks for no passkey by itself', () => {
    const page = loginPage({ ...base, alert: t('en', 'passkey.error.unknown'), passkeys: { ...base.passkeys, unknownCredential: 'Y3JlZA' } });
    expect(page.html).to.include(`<p id="signin-error" class="error" role="alert">${t('en', 'passkey.error.unknown')}</p>`);
    expect(page.html).to.not.include('data-autofill');
    expect(page.html).to.include('data-unknown="Y3JlZA"');
  });

  it('escapes an upstream\'s name and an error', () => {
    const page = loginPage({ ...base, upstreams: [{ name: HOSTILE, action: '/x' }], alert: HOSTILE });
    expectEscaped(page.html);
  });
});

describe('the page of linking that asks first', () => {
  const base = {
    serviceName: 'Acme ID', csrf: 'tok', upstreamName: 'Social', email: 'kate@example.test',
    codeAction: '/interaction/u1/link/code', cancelAction: '/interaction/u1/link/cancel', formAction: ['https://site.example/cb'],
  };
  const passkeys = { script: SCRIPT, rpId: 'id.example', optionsAction: '/interaction/u1/passkey/options', action: '/interaction/u1/passkey' };

  it('says why in every language and offers the code (a plain form), then Cancel; without JavaScript nothing else', () => {
    for (const locale of LOCALES) {
      const page = linkFirstPage({ ...base, locale });
      expectCommonPage(page, locale);
      expect(/<h1>([^<]*)<\/h1>/.exec(page.html)?.[1]).to.equal(t(locale, 'link_first.title'));
      expect(text(/<p id="link-intro">(.*?)<\/p>/s.exec(page.html)![1]!)).to.equal(t(locale, 'link_first.intro', { name: 'Social', email: 'kate@example.test' }).replace(/\s+/g, ' '));
      expect(forms(page.html).map((f) => [f.attrs.action, f.buttons.map((b) => b.text)])).to.deep.equal([
        ['/interaction/u1/link/code', [t(locale, 'link_first.send_code')]],
        ['/interaction/u1/link/cancel', [t(locale, 'link_first.cancel')]],
      ]);
      expect(page.csp).to.include("form-action 'self' https://site.example;");
    }
  });

  it('offers the account\'s passkey where the browser can (hidden until the script finds WebAuthn), its script by its exact URL', () => {
    const page = linkFirstPage({ ...base, locale: 'en', passkeys });
    const passkeyForm = forms(page.html).find((f) => f.attrs.id === 'passkey-signin')!;
    expect(passkeyForm.attrs).to.include({ action: '/interaction/u1/passkey', 'data-options': '/interaction/u1/passkey/options', 'data-rp': 'id.example' });
    expect(passkeyForm.raw).to.match(/ hidden data-passkey-hidden>/);
    expect(passkeyForm.attrs).to.not.have.property('data-autofill');
    expect(scriptSrc(page.csp)).to.equal(`script-src ${SCRIPT}`);
  });

  it('escapes the upstream\'s name, the address and an error', () => {
    const page = linkFirstPage({ ...base, locale: 'en', upstreamName: HOSTILE, email: HOSTILE, error: HOSTILE });
    expectEscaped(page.html);
  });
});

describe('the passkey sign-up page', () => {
  it('asks for a name (labelled, hinted) and says what an account without an address means; without JavaScript it says why nothing can be done here', () => {
    const page = passkeySignUpPage({
      locale: 'en', serviceName: 'Acme ID', csrf: 'tok', script: SCRIPT, optionsAction: '/i/u1/passkey/new/options', action: '/i/u1/passkey/new', backHref: '/i/u1',
      name: HOSTILE, error: t('en', 'passkey.error.name'),
    });
    expectEscaped(page.html);
    expect(page.html).to.include('<label for="name">Your name</label>').and.include('aria-invalid="true"');
    expect(page.html).to.include(t('en', 'passkey.signup.no_email'));
    expect(page.html).to.match(/<p class="error" data-nojs>/);
    expect(page.html).to.match(/<form id="passkey-create" [^>]*data-passkey-create[^>]*hidden data-passkey-hidden>/);
    expect(page.html).to.include('<a href="/i/u1">');
    expect(scriptSrc(page.csp)).to.equal(`script-src ${SCRIPT}`);
  });
});

describe('the console\'s Passkeys and Linked accounts sections', () => {
  const passkey = { id: 'cred/1+', name: HOSTILE, createdAt: Date.UTC(2026, 0, 2), synced: true };

  it('list passkeys with added and last used, a rename form each, removal behind a confirmation; the last way in is said, not offered', () => {
    const html = passkeysSection({ locale: 'en', csrf: 'tok', email: 'ann@example.com', ways: 2, passkeys: [passkey, { ...passkey, id: 'c2', name: 'Phone', lastUsedAt: Date.UTC(2026, 1, 3) }], full: false });
    expectEscaped(html);
    expect(html).to.include('action="/console/passkeys/cred%2F1%2B/rename"').and.include('href="/console/passkeys/cred%2F1%2B/remove"');
    expect(html).to.include(`<dd>${t('en', 'console.passkeys.never_used')}</dd>`).and.include('<time datetime="2026-02-03T00:00:00.000Z">');
    expect(html).to.include('ann@example.com').and.include('id="passkey-add"');
    const last = passkeysSection({ locale: 'en', csrf: 'tok', ways: 1, passkeys: [passkey], full: false });
    expect(last).to.include(t('en', 'console.passkeys.only_way')).and.include(t('en', 'console.passkeys.intro_no_email'));
    expect(last).to.not.include('/remove"');
    const full = passkeysSection({ locale: 'en', csrf: 'tok', ways: 21, passkeys: [passkey], full: true });
    expect(full).to.include(t('en', 'console.passkeys.full')).and.not.include('id="passkey-add"');
  });

  it('show their own notices: confirmations as a status, refusals as an alert, in their own section only', () => {
    const added = passkeysSection({ locale: 'en', csrf: 'tok', ways: 2, passkeys: [], full: false, notice: 'passkey_added' });
    expect(added).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t('en', 'console.passkeys.notice.added')}</p>`);
    const refused = linkedAccountsSection({ locale: 'en', csrf: 'tok', ways: 1, upstreams: [], notice: 'upstream_last' });
    expect(refused).to.include(`<p id="notice" class="notice notice-error" role="alert" tabindex="-1">${t('en', 'console.upstreams.notice.last')}</p>`);
    expect(linkedAccountsSection({ locale: 'en', csrf: 'tok', ways: 1, upstreams: [], notice: 'passkey_added' })).to.not.include('id="notice"');
    expect(passkeysSection({ locale: 'en', csrf: 'tok', ways: 2, passkeys: [], full: false, notice: 'passkey_unknown' })).to.not.include('id="notice"');
  });

  it('list every upstream, linked (which account, unlink) or not (link), escaped', () => {
    const html = linkedAccountsSection({
      locale: 'en', csrf: 'tok', ways: 2,
      upstreams: [{ id: 'social', name: HOSTILE, link: { label: HOSTILE, linkedAt: 1, lastUsedAt: 2 } }, { id: 'work', name: 'Work' }],
    });
    expectEscaped(html);
    expect(html).to.include('action="/console/linked-accounts/social/unlink"').and.include('action="/console/linked-accounts/work/link"');
    const last = linkedAccountsSection({ locale: 'en', csrf: 'tok', ways: 1, upstreams: [{ id: 'social', name: 'Social', link: { linkedAt: 1 } }] });
    expect(last).to.include(t('en', 'console.upstreams.only_way')).and.not.include('/unlink"');
  });

  it('confirm a removal, or refuse it for the last way in', () => {
    const page = passkeyRemovePage({ locale: 'en', serviceName: 'Acme ID', csrf: 'tok', accountLabel: 'Ann', passkey, last: false });
    expectEscaped(page.html);
    expect(page.html).to.include('action="/console/passkeys/cred%2F1%2B/remove"');
    const last = passkeyRemovePage({ locale: 'en', serviceName: 'Acme ID', csrf: 'tok', passkey, last: true });
    expect(last.html).to.include(`<p class="error" role="alert">${t('en', 'console.passkeys.notice.last')}</p>`).and.not.include('<form');
  });
});

describe('host sections of the console (console.sections)', () => {
  const page = (extra: Parameters<typeof consolePage>[0]['extra']) => consolePage({
    locale: 'en', serviceName: 'Acme ID', csrf: 'tok', sites: [], senders: [], adminOf: [],
    inbox: { items: [], unread: 0, next: null, cursor: null }, issuer: 'https://id.example', extra,
  });

  it('come after the console\'s own, as cards with their escaped heading, in the navigation; their scripts and form targets reach the CSP', () => {
    const rendered = page([{ id: 'passkeys', title: HOSTILE, html: '<p class="host-made">ok</p>', scripts: ['/assets/passkeys-abc.js'], formAction: ['https://accounts.social.example/auth'] }]);
    expectEscaped(rendered.html);
    expect(rendered.html).to.include('<section id="passkeys" class="card" aria-labelledby="passkeys-title">').and.include('<p class="host-made">ok</p>');
    expect(rendered.html.indexOf('id="language"')).to.be.lessThan(rendered.html.indexOf('id="passkeys"'));
    expect(rendered.html).to.include('<a href="#passkeys">');
    expect(scriptSrc(rendered.csp)).to.equal(`script-src ${SCRIPT}`);
    expect(rendered.csp).to.include("form-action 'self' https://accounts.social.example");
    expect(page([]).csp).to.not.include('script-src');
  });

  it('are checked: a bad or taken id, or a script off the service\'s origin, is a TypeError', async () => {
    const person = { accountId: 'a', locale: 'en' as const };
    expect(await hostSections(undefined, person)).to.deep.equal([]);
    for (const bad of [{ id: 'Bad Id' }, { id: 'inbox' }, { id: 'x', scripts: ['https://cdn.example/x.js'] }, { id: 'y', scripts: ['/a/../b.js'] }]) {
      let thrown: unknown;
      try {
        await hostSections(() => [{ title: 't', html: '', ...bad }], person);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify(bad)).to.be.instanceOf(TypeError);
    }
  });

  it('never let a script URL smuggle a directive into the CSP', () => {
    expect(buildCsp([], [], ['https://id.example/a.js; script-src *', 'javascript:alert(1)', 'https://id.example/x.js?y'])).to.not.include('script-src');
  });
});
