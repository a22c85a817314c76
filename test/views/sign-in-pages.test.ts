/** The reference provider's sign-in pages: the address, the code and consent. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { PAGE_STYLE_HASH } from '../../views/layout.ts';
import { codePage } from '../../examples/reference/views/interaction/code.ts';
import { consentPage } from '../../examples/reference/views/interaction/consent.ts';
import { loginPage } from '../../examples/reference/views/interaction/login.ts';
import { BREAKOUT, buttonTexts, count, expectCommonPage, expectHostileEscaped, forms, HOSTILE, labelFor, styleHash, tags } from '../helpers/html.ts';

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
    expect(buttonTexts(form)).to.deep.equal(['Send me a code']);
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
    expect(buttonTexts(form)).to.deep.equal(['Sign in']);
    expect(page.html).to.include('We sent a 6-digit code to <strong>a@b.example</strong>. It expires in 10 minutes.');
    expect(page.html).to.not.include('Use a different email address');
  });

  it('adds "Send a new code" and "Use a different email address" forms when their actions are given', () => {
    const page = codePage({ ...base, resendAction: '/i/abc/resend', restartAction: '/i/abc/restart' });
    const all = forms(page.html);
    expect(all).to.have.length(3);
    expect(all.slice(1).map((f) => f.attrs.action)).to.deep.equal(['/i/abc/resend', '/i/abc/restart']);
    for (const form of all.slice(1)) expect(form.inputs.map((i) => i.attrs)).to.deep.equal([{ type: 'hidden', name: 'csrf', value: 'tok' }]);
    expect(all.slice(1).map((f) => buttonTexts(f))).to.deep.equal([['Send a new code'], ['Use a different email address']]);
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
    expect(buttonTexts(all[0])).to.deep.equal(['Allow']);
    expect(all[1]?.attrs.action).to.equal('/i/abc/abort');
    expect(buttonTexts(all[1])).to.deep.equal(['Deny']);
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
