/** The reference provider's letter with the sign-in code. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { loginCodeLetter } from '../../examples/reference/views/letters/login-code.ts';
import { DIR, HOSTILE } from '../helpers/html.ts';

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
