import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { PAGE_STYLE_HASH, pageHeaders, renderPage } from '../../views/layout.ts';
import { html } from '../../src/text/html.ts';
import { loginPage } from '../../examples/reference/views/interaction/login.ts';
import { codePage } from '../../examples/reference/views/interaction/code.ts';
import { consentPage } from '../../examples/reference/views/interaction/consent.ts';
import { errorPage } from '../../views/error.ts';
import { blockedSitePage } from '../../views/blocked-site.ts';
import { loginCodeLetter } from '../../examples/reference/views/letters/login-code.ts';

const SCRIPT = '<script>alert(1)</script>';
// Spelled out, not taken from direction(): a new locale must be added here on purpose.
const DIR: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', de: 'ltr', fr: 'ltr', ar: 'rtl' };
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const HOSTILE = `${SCRIPT}${BREAKOUT}`;

type Tag = { raw: string; attrs: Record<string, string> };
type Form = Tag & { body: string; inputs: Tag[]; buttons: string[] };

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
    buttons: [...(m[2] ?? '').matchAll(/<button\b[^>]*>([\s\S]*?)<\/button>/g)].map((b) => b[1] ?? ''),
  }));
}

function count(source: string, pattern: RegExp): number {
  return [...source.matchAll(pattern)].length;
}

function labelFor(source: string, id: string): string | undefined {
  return source.match(new RegExp(`<label for="${id}">([^<]*)</label>`))?.[1];
}

function expectHostileEscaped(page: string): void {
  expect(page).to.not.include('<script');
  expect(page).to.not.include('<img');
  expect(page).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(page).to.include('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
}

function expectCommonPage(page: { html: string; csp: string }, locale: Locale): void {
  expect(page.html).to.match(/^<!doctype html>\n<html /);
  expect(page.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
  expect(page.html).to.include('<meta charset="utf-8">');
  expect(page.html).to.include('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(page.html).to.include('<meta name="referrer" content="no-referrer">');
  expect(page.html).to.include('<main id="main"');
  expect(count(page.html, /<h1\b/g)).to.equal(1);
  expect(count(page.html, /<style\b/g)).to.equal(1);
  expect(page.html).to.not.match(/<script\b/i);
  expect(page.html).to.not.match(/\son[a-z]+=/i);
  expect(page.html).to.not.match(/<link\b/i);
  // Every form posts and carries the CSRF token.
  for (const form of forms(page.html)) {
    expect(form.attrs.method).to.equal('post');
    expect(form.inputs.filter((i) => i.attrs.type === 'hidden' && i.attrs.name === 'csrf')).to.have.length(1);
  }
}

function styleHash(page: string): string {
  const style = page.match(/<style>([\s\S]*?)<\/style>/)?.[1];
  expect(style, 'style element').to.be.a('string');
  return createHash('sha256').update(style ?? '', 'utf8').digest('base64');
}

describe('layout', () => {
  const page = renderPage({ locale: 'de', title: 'T<1>', main: html`<h1>x</h1>`, serviceName: 'Acme "ID"' });

  it('renders a complete document with an escaped title', () => {
    expectCommonPage(page, 'de');
    expect(page.html).to.include('<title>T&lt;1&gt; — Acme &quot;ID&quot;</title>');
    expect(page.html).to.match(/<header\b[^>]*>Acme &quot;ID&quot;<\/header>/);
    expect(page.html).to.match(/<footer\b/);
  });

  it('CSP pins the real hash of the inline style', () => {
    const hash = styleHash(page.html);
    expect(hash).to.equal(PAGE_STYLE_HASH);
    expect(page.csp).to.equal(
      `default-src 'none'; style-src 'sha256-${hash}'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
  });

  it('adds form-action origins and refuses anything that is not an http(s) origin', () => {
    const { csp } = renderPage({
      locale: 'en',
      title: 'x',
      main: html``,
      serviceName: 's',
      formAction: ['https://rp.example/cb?x=1', 'https://rp.example/other', "https://a.example; script-src 'unsafe-inline'", 'javascript:alert(1)', '/relative'],
    });
    expect(csp).to.include("form-action 'self' https://rp.example;");
    expect(csp).to.not.include('script-src');
    expect(csp).to.not.include('javascript');
    expect(csp.split(';')).to.have.length(6);
  });

  it('pageHeaders gives the security headers', () => {
    expect(pageHeaders('CSP')).to.deep.equal({
      'Content-Security-Policy': 'CSP',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
    });
  });
});

describe('loginPage', () => {
  const base = { locale: 'en' as const, serviceName: 'Acme ID', action: '/interaction/abc/login', csrf: 'tok&en' };

  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = loginPage({ ...base, locale, clientName: 'Shop' });
      expectCommonPage(page, locale);
      expect(page.html).to.include(`<h1>${t(locale, 'login.title')}</h1>`);
      expect(styleHash(page.html)).to.equal(PAGE_STYLE_HASH);
      expect(page.csp).to.include(`'sha256-${styleHash(page.html)}'`);
    });
  }

  it('has one form with csrf, a labelled email input and one submit button', () => {
    const page = loginPage({ ...base, clientName: 'Shop', email: 'a@b.example' });
    const all = forms(page.html);
    expect(all).to.have.length(1);
    const [form] = all;
    expect(form?.attrs.action).to.equal('/interaction/abc/login');
    expect(form?.inputs).to.have.length(2);
    expect(form?.inputs[0]?.attrs).to.deep.equal({ type: 'hidden', name: 'csrf', value: 'tok&amp;en' });
    const email = form?.inputs[1]?.attrs ?? {};
    expect(email).to.include({ id: 'email', name: 'email', type: 'email', autocomplete: 'email', value: 'a@b.example' });
    expect(email).to.have.property('required');
    expect(labelFor(page.html, 'email')).to.equal('Email address');
    expect(form?.buttons).to.deep.equal(['Send me a code']);
    expect(count(page.html, /<button\b[^>]*type="submit"/g)).to.equal(1);
    expect(page.html).to.include('to continue to <strong>Shop</strong>');
    expect(page.html).to.include(t('en', 'login.intro'));
    expect(page.html).to.not.include('role="alert"');
    expect(email).to.not.have.property('aria-invalid');
  });

  it('omits the client line when the client is unknown', () => {
    expect(loginPage(base).html).to.not.include('to continue to');
  });

  it('announces an error and links it to the input', () => {
    const page = loginPage({ ...base, error: t('en', 'login.error.invalid_email') });
    expect(page.html).to.include('<p id="email-error" class="error" role="alert">Enter a valid email address.</p>');
    const email = tags(page.html, 'input').find((i) => i.attrs.name === 'email')?.attrs ?? {};
    expect(email['aria-describedby']?.split(' ')).to.include('email-error');
    expect(email['aria-invalid']).to.equal('true');
  });

  it('escapes hostile client name, email, csrf and error', () => {
    const page = loginPage({ ...base, clientName: HOSTILE, email: HOSTILE, csrf: HOSTILE, error: HOSTILE });
    expectHostileEscaped(page.html);
    expect(forms(page.html)[0]?.inputs).to.have.length(2);
  });

  it('escapes a hostile action', () => {
    const page = loginPage({ ...base, action: BREAKOUT });
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include('action="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
  });
});

describe('codePage', () => {
  const base = { locale: 'en' as const, serviceName: 'Acme ID', action: '/i/abc/code', csrf: 'tok', email: 'a@b.example' };

  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = codePage({ ...base, locale, resendAction: '/i/abc/restart' });
      expectCommonPage(page, locale);
      expect(page.html).to.include(`<h1>${t(locale, 'code.title')}</h1>`);
      expect(page.csp).to.include(`'sha256-${styleHash(page.html)}'`);
    });
  }

  it('has the code form with the one-time-code input', () => {
    const page = codePage(base);
    const all = forms(page.html);
    expect(all).to.have.length(1);
    const [form] = all;
    expect(form?.attrs.action).to.equal('/i/abc/code');
    expect(form?.inputs).to.have.length(2);
    expect(form?.inputs[0]?.attrs).to.deep.equal({ type: 'hidden', name: 'csrf', value: 'tok' });
    const code = form?.inputs[1]?.attrs ?? {};
    expect(code).to.include({
      id: 'code',
      name: 'code',
      autocomplete: 'one-time-code',
      inputmode: 'numeric',
      pattern: '[0-9]{6}',
      maxlength: '6',
    });
    expect(code).to.have.property('required');
    expect(labelFor(page.html, 'code')).to.equal('6-digit code');
    expect(form?.buttons).to.deep.equal(['Sign in']);
    expect(page.html).to.include('We sent a 6-digit code to <strong>a@b.example</strong>. It expires in 10 minutes.');
    expect(page.html).to.not.include('Use a different email address');
  });

  it('adds "Send a new code" and "Use a different email address" forms when their actions are given', () => {
    const page = codePage({ ...base, resendAction: '/i/abc/resend', restartAction: '/i/abc/restart' });
    const all = forms(page.html);
    expect(all).to.have.length(3);
    expect(all.slice(1).map((f) => f.attrs.action)).to.deep.equal(['/i/abc/resend', '/i/abc/restart']);
    for (const form of all.slice(1)) expect(form.inputs.map((i) => i.attrs)).to.deep.equal([{ type: 'hidden', name: 'csrf', value: 'tok' }]);
    expect(all.slice(1).map((f) => f.buttons)).to.deep.equal([['Send a new code'], ['Use a different email address']]);
  });

  it('offers only "Send a new code", as the primary button, when the code can no longer be used', () => {
    const page = codePage({ ...base, usable: false, error: t('en', 'code.error.expired'), resendAction: '/i/abc/resend', restartAction: '/i/abc/restart' });
    expect(tags(page.html, 'input').some((i) => i.attrs.name === 'code')).to.equal(false);
    expect(page.html).to.include('<p id="code-error" class="error" role="alert">That code has expired. Send yourself a new code.</p>');
    expect(page.html).to.include('<button type="submit" class="primary">Send a new code</button>');
  });

  it('announces an error linked to the code input', () => {
    const page = codePage({ ...base, error: t('en', 'code.error.invalid', { count: 3 }) });
    expect(page.html).to.match(/<p id="code-error" class="error" role="alert">That code is not right\. Attempts left for this code: 3\.<\/p>/);
    const code = tags(page.html, 'input').find((i) => i.attrs.name === 'code')?.attrs ?? {};
    expect(code['aria-describedby']?.split(' ')).to.include('code-error');
    expect(code['aria-invalid']).to.equal('true');
  });

  it('escapes a hostile email and error', () => {
    const page = codePage({ ...base, email: HOSTILE, error: HOSTILE });
    expectHostileEscaped(page.html);
  });
});

describe('consentPage', () => {
  const base = {
    locale: 'en' as const,
    serviceName: 'Acme ID',
    clientName: 'Shop',
    action: '/i/abc/confirm',
    abortAction: '/i/abc/abort',
    csrf: 'tok',
    scopes: ['openid', 'profile', 'email', 'orders:read'],
    offlineAccess: false,
  };

  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = consentPage({ ...base, locale, offlineAccess: true, claims: ['email'], accountEmail: 'a@b.example' });
      expectCommonPage(page, locale);
      expect(page.html).to.include(`<h1>${t(locale, 'consent.title', { clientName: 'Shop' })}</h1>`);
      expect(page.csp).to.include(`'sha256-${styleHash(page.html)}'`);
      expect(page.html).to.include(t(locale, 'consent.scope.offline_access'));
    });
  }

  it('has exactly an Allow form and a Deny form', () => {
    const page = consentPage(base);
    const all = forms(page.html);
    expect(all).to.have.length(2);
    expect(all[0]?.attrs.action).to.equal('/i/abc/confirm');
    expect(all[0]?.buttons).to.deep.equal(['Allow']);
    expect(all[1]?.attrs.action).to.equal('/i/abc/abort');
    expect(all[1]?.buttons).to.deep.equal(['Deny']);
    for (const form of all) {
      expect(form.inputs.map((i) => i.attrs)).to.deep.equal([{ type: 'hidden', name: 'csrf', value: 'tok' }]);
    }
    expect(count(page.html, /<button\b/g)).to.equal(2);
  });

  it('describes scopes in human words and shows unknown scopes by name', () => {
    const page = consentPage(base);
    expect(page.html).to.include('<li>Confirm your identity</li>');
    expect(page.html).to.include('<li>Your name and profile</li>');
    expect(page.html).to.include('<li>Your email address</li>');
    expect(page.html).to.include('<li><code>orders:read</code></li>');
    expect(page.html).to.not.include('Keep access');
    expect(page.html).to.not.include('Signed in as');
  });

  it('shows offline access once when requested', () => {
    for (const input of [{ offlineAccess: true }, { scopes: [...base.scopes, 'offline_access'] }, { offlineAccess: true, scopes: ['openid', 'offline_access'] }]) {
      const page = consentPage({ ...base, ...input });
      expect(count(page.html, /Keep access when you are not signed in \(until you revoke it in your console\)/g)).to.equal(1);
      expect(page.html).to.not.include('<code>offline_access</code>');
    }
  });

  it('lists claims and the signed-in account', () => {
    const page = consentPage({ ...base, claims: ['given_name', 'email', 'email'], accountEmail: 'me@b.example' });
    expect(page.html).to.include('<li><code>given_name</code></li>');
    expect(count(page.html, /<li><code>email<\/code><\/li>/g)).to.equal(1);
    expect(page.html).to.include('Signed in as <strong>me@b.example</strong>');
  });

  it('links the client only for http(s) URLs', () => {
    const ok = consentPage({ ...base, clientUri: 'https://shop.example/about' });
    expect(ok.html).to.include('<a href="https://shop.example/about" target="_blank" rel="noopener noreferrer">Website: shop.example</a>');
    for (const clientUri of ['javascript:alert(1)', 'data:text/html,x', 'not a url', '//shop.example', 'JAVASCRIPT:alert(1)']) {
      expect(consentPage({ ...base, clientUri }).html, clientUri).to.not.include('<a href="');
    }
  });

  it('escapes a hostile client name, client URI, scope, claim and account email', () => {
    const page = consentPage({
      ...base,
      clientName: HOSTILE,
      clientUri: `https://x.example/${BREAKOUT}`,
      scopes: [HOSTILE],
      claims: [HOSTILE],
      accountEmail: HOSTILE,
    });
    expect(page.html).to.not.include('<script');
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt; wants to access your account');
    expect(tags(page.html, 'a')).to.have.length(2); // skip link and the client link
  });
});

describe('errorPage', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = errorPage({ locale, serviceName: 'Acme ID', title: t(locale, 'error.title'), message: t(locale, 'error.session_expired'), status: 400 });
      expectCommonPage(page, locale);
      expect(forms(page.html)).to.have.length(0);
      expect(page.html).to.include(`<h1>${t(locale, 'error.title')}</h1>`);
      expect(page.html).to.include(t(locale, 'error.session_expired'));
      expect(page.html).to.include(t(locale, 'error.status', { status: 400 }));
      expect(page.csp).to.include(`'sha256-${styleHash(page.html)}'`);
    });
  }

  it('escapes hostile title and message', () => {
    const page = errorPage({ locale: 'en', serviceName: HOSTILE, title: HOSTILE, message: HOSTILE });
    expectHostileEscaped(page.html);
    expect(page.html).to.not.include('Error ');
  });
});

describe('loginCodeLetter', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const letter = loginCodeLetter({ locale, code: '123456', serviceName: 'Acme ID' });
      expect(letter.subject).to.include('123456');
      expect(letter.subject).to.include('Acme ID');
      expect(letter.text).to.include('123456');
      expect(letter.text).to.include(t(locale, 'letter.expires', { minutes: 10 }));
      expect(letter.text).to.include(t(locale, 'letter.ignore'));
      expect(letter.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
      expect(letter.html).to.include(`<div lang="${locale}" dir="${DIR[locale]}"`);
      expect(letter.html).to.match(/monospace[^>]*>123456<\/p>/);
      expect(letter.html).to.not.match(/<a\s/i);
      expect(letter.html).to.not.match(/<script\b|<style\b|<link\b/i);
    });
  }

  it('uses the English wording and a custom lifetime', () => {
    const letter = loginCodeLetter({ locale: 'en', code: '654321', serviceName: 'Acme ID', minutes: 15 });
    expect(letter.subject).to.equal('654321 is your sign-in code for Acme ID');
    expect(letter.text).to.include('The code expires in 15 minutes.');
    expect(letter.text).to.include('If you did not ask for this code, you can ignore this email.');
  });

  it('names the site the person is signing in to, its name escaped and no address in it linkable', () => {
    const letter = loginCodeLetter({ locale: 'de', code: '123456', serviceName: 'Acme ID', clientName: 'Shop <b>evil.com</b>' });
    expect(letter.text).to.include('Geben Sie diesen Code ein, um sich bei Acme ID anzumelden und mit Shop <b>evil\u2060.\u2060com</b> fortzufahren:');
    expect(letter.html).to.include('Shop &lt;b&gt;evil\u2060.\u2060com&lt;/b&gt;');
  });

  it('says it was sent by a program, and in which language (Auto-Submitted, Content-Language)', () => {
    expect(loginCodeLetter({ locale: 'fr', code: '123456', serviceName: 'Acme ID' }).headers).to.deep.equal({ 'Auto-Submitted': 'auto-generated', 'Content-Language': 'fr' });
  });

  it('keeps the subject on one line and escapes the HTML', () => {
    const letter = loginCodeLetter({ locale: 'en', code: '123456', serviceName: `Evil\r\nBcc: x@y.example ${HOSTILE}` });
    expect(letter.subject).to.not.match(/[\r\n]/);
    expect(letter.html).to.not.include('<script');
    expect(letter.html).to.not.include('<img');
    expect(letter.html).to.not.match(/<a\s/i);
  });
});

describe('blocked-site page', () => {
  const input = {
    serviceName: 'Example ID',
    clientName: HOSTILE,
    blockedAt: Date.UTC(2026, 2, 5, 23, 30),
    accountEmail: 'ann@example.com',
    unblockAction: '/console/blocked-site/u1/unblock',
    cancelAction: '/console/blocked-site/u1/cancel',
    csrf: 'tok',
    formAction: ['https://site.example/callback'],
  };

  it('names the site and the date in the reader\'s language, escaped, with two CSRF-protected one-button forms', () => {
    const expected: Record<Locale, string> = { en: 'March 5, 2026', de: '5. März 2026', fr: '5 mars 2026', ar: '5 مارس 2026' };
    for (const locale of LOCALES) {
      const page = blockedSitePage({ ...input, locale });
      expect(page.html).to.not.include(SCRIPT).and.not.include(BREAKOUT);
      expect(page.html).to.include(expected[locale]);
      const f = forms(page.html);
      // Cancel, the safe choice, first and primary.
      expect(f.map((x) => x.attrs.action)).to.deep.equal([input.cancelAction, input.unblockAction]);
      expect(f.map((x) => x.buttons)).to.deep.equal([[t(locale, 'blocked.cancel')], [t(locale, 'blocked.unblock')]]);
      expect(page.html).to.include(`<button type="submit" class="primary">${t(locale, 'blocked.cancel')}</button>`);
      expect(page.html).to.include(`<button type="submit" class="secondary">${t(locale, 'blocked.unblock')}</button>`);
      for (const x of f) expect(x.inputs.map((i) => [i.attrs.name, i.attrs.value])).to.deep.equal([['csrf', 'tok']]);
      expect(page.csp).to.include("form-action 'self' https://site.example");
      expect(page.html).to.not.include('<script');
    }
  });
});
