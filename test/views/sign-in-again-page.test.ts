/**
 * The page before a fresh sign-in (views/console/sign-in-again.ts), in each
 * language: why, in the reader's words and direction; "Sign in again" a
 * link to the sign-in, Cancel a link back; no script and no form, so nothing
 * on it acts and it works without JavaScript.
 */
import { expect } from 'chai';

import { RECENT_SIGN_IN_ACTIONS } from '../../src/index.ts';
import { LOCALES, t } from '../../src/i18n/index.ts';
import { signInAgainPage } from '../../views/console/sign-in-again.ts';

describe('the page before a fresh sign-in', () => {
  const signInUrl = 'https://id.example/auth?client_id=oidc-signout-notify-console&max_age=0&state=%2Fconsole%23passkeys';

  for (const locale of LOCALES) {
    it(`says why and offers the sign-in and Cancel, in ${locale}`, () => {
      const page = signInAgainPage({ locale, serviceName: 'Acme ID', accountEmail: 'kim@example.com', why: 'reauth.why.add_passkey', signInUrl, back: '/console#passkeys' });
      expect(page.html).to.include(`<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">`);
      expect(page.html).to.include(`<h1>${t(locale, 'reauth.title')}</h1>`);
      expect(page.html).to.include(`<p class="lead">${t(locale, 'reauth.why.add_passkey')}</p>`);
      expect(page.html).to.include(`<a class="button primary" href="${signInUrl.replaceAll('&', '&amp;')}">${t(locale, 'reauth.submit')}</a>`);
      expect(page.html).to.include(`<a class="button secondary" href="/console#passkeys">${t(locale, 'console.cancel')}</a>`);
      expect(page.html).to.not.include('<script').and.not.include('<form');
      expect(page.csp).to.include("default-src 'none'").and.not.include('script-src');
    });
  }

  it('has a sentence for every action in every language, none left in English', () => {
    for (const action of RECENT_SIGN_IN_ACTIONS) {
      for (const locale of LOCALES.filter((l) => l !== 'en')) {
        expect(t(locale, `reauth.why.${action}`), `${locale} ${action}`).to.not.equal(t('en', `reauth.why.${action}`));
      }
    }
  });
});
