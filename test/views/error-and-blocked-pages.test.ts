/** The plugin's error page and the page a blocked site's sign-in ends on. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { blockedSitePage } from '../../views/blocked-site.ts';
import { errorPage } from '../../views/error.ts';
import { BREAKOUT, buttonTexts, expectCommonPage, expectHostileEscaped, forms, HOSTILE, SCRIPT, styleHash } from '../helpers/html.ts';

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
      expect(f.map((x) => buttonTexts(x))).to.deep.equal([[t(locale, 'blocked.cancel')], [t(locale, 'blocked.unblock')]]);
      expect(page.html).to.include(`<button type="submit" class="primary">${t(locale, 'blocked.cancel')}</button>`);
      expect(page.html).to.include(`<button type="submit" class="secondary">${t(locale, 'blocked.unblock')}</button>`);
      for (const x of f) expect(x.inputs.map((i) => [i.attrs.name, i.attrs.value])).to.deep.equal([['csrf', 'tok']]);
      expect(page.csp).to.include("form-action 'self' https://site.example");
      expect(page.html).to.not.include('<script');
    }
  });
});
