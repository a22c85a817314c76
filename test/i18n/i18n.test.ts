import { expect } from 'chai';
import { LOCALES, direction, isLocale, negotiateLocale, t } from '../../src/i18n/index.ts';
import type { Locale, MessageKey } from '../../src/i18n/index.ts';
import { en } from '../../src/i18n/messages/en.ts';
import { de } from '../../src/i18n/messages/de.ts';
import { fr } from '../../src/i18n/messages/fr.ts';
import { ar } from '../../src/i18n/messages/ar.ts';

const catalogs: Record<Locale, Record<MessageKey, string>> = { en, de, fr, ar };
const keys = Object.keys(en) as MessageKey[];

function placeholders(message: string): string[] {
  return [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();
}

describe('i18n catalogs', () => {
  for (const locale of LOCALES) {
    it(`${locale} has every key, non-empty, with the placeholders of en`, () => {
      const catalog = catalogs[locale];
      expect(Object.keys(catalog).sort()).to.deep.equal([...keys].sort());
      for (const key of keys) {
        expect(catalog[key].trim(), `${locale} ${key}`).to.not.equal('');
        expect(placeholders(catalog[key]), `${locale} ${key}`).to.deep.equal(placeholders(en[key]));
      }
    });
  }

  it('has the messages the reference provider relies on', () => {
    expect(en['login.error.invalid_email']).to.equal('Enter a valid email address.');
    expect(en['code.error.expired']).to.equal('That code has expired. Send yourself a new code.');
    expect(en['error.session_expired']).to.equal('Your sign-in took too long or has already finished. Go back to the site you came from and start again.');
    expect(en['error.not_found']).to.equal('Page not found');
  });

  it('supports exactly en, de, fr and ar', () => {
    expect(LOCALES).to.deep.equal(['en', 'de', 'fr', 'ar']);
  });

  it('translations are not copies of English', () => {
    for (const key of ['login.title', 'code.title', 'consent.allow', 'error.title', 'notify.stop', 'category.transactional'] as const) {
      expect(de[key]).to.not.equal(en[key]);
      expect(fr[key]).to.not.equal(en[key]);
      expect(ar[key]).to.not.equal(en[key]);
    }
  });

  it('ar is written in Arabic script, with Arabic punctuation', () => {
    for (const key of keys) {
      expect(ar[key], key).to.match(/\p{Script=Arabic}/u);
      expect(ar[key], key).to.not.match(/[?;]/); // ؟ and ؛ instead
    }
  });
});

describe('t', () => {
  it('fills placeholders without escaping', () => {
    expect(t('en', 'consent.title', { clientName: '<Acme & Co>' })).to.equal('<Acme & Co> wants to access your account');
    expect(t('de', 'code.intro', { email: 'a@b.c', minutes: 10 })).to.equal(
      'Wir haben einen 6-stelligen Code an a@b.c geschickt. Er ist 10 Minuten lang gültig.',
    );
  });

  it('leaves unknown or missing placeholders as is', () => {
    expect(t('en', 'code.intro', { minutes: 5 })).to.equal('We sent a 6-digit code to {email}. It expires in 5 minutes.');
    expect(t('en', 'login.subtitle')).to.equal('to continue to {clientName}');
  });

  it('does not interpret replacement patterns in params', () => {
    expect(t('en', 'login.subtitle', { clientName: "$& $' $1" })).to.equal("to continue to $& $' $1");
  });
});

describe('isLocale / direction', () => {
  it('recognises only supported locales', () => {
    expect(isLocale('de')).to.equal(true);
    expect(isLocale('es')).to.equal(false);
    expect(isLocale(undefined)).to.equal(false);
    expect(isLocale(1)).to.equal(false);
  });

  it('is rtl for ar and ltr for the others', () => {
    expect(LOCALES.map((locale) => [locale, direction(locale)])).to.deep.equal([
      ['en', 'ltr'],
      ['de', 'ltr'],
      ['fr', 'ltr'],
      ['ar', 'rtl'],
    ]);
  });
});

describe('negotiateLocale', () => {
  const table: { name: string; input: Parameters<typeof negotiateLocale>[0]; fallback?: Locale; want: Locale }[] = [
    { name: 'nothing -> fallback', input: {}, want: 'en' },
    { name: 'custom fallback', input: {}, fallback: 'fr', want: 'fr' },
    { name: 'ui_locales beats Accept-Language', input: { uiLocales: 'fr', acceptLanguage: 'de' }, want: 'fr' },
    { name: 'ui_locales in order, skipping unsupported', input: { uiLocales: 'es-ES  de fr' }, want: 'de' },
    { name: 'ui_locales region', input: { uiLocales: 'fr-CA' }, want: 'fr' },
    { name: 'unsupported ui_locales fall to Accept-Language', input: { uiLocales: 'ja it', acceptLanguage: 'de' }, want: 'de' },
    { name: 'Accept-Language by q', input: { acceptLanguage: 'en;q=0.5, fr;q=0.9, de;q=0.7' }, want: 'fr' },
    { name: 'Accept-Language ties keep header order', input: { acceptLanguage: 'de;q=0.8, fr;q=0.8' }, want: 'de' },
    { name: 'implicit q=1 beats explicit lower q', input: { acceptLanguage: 'fr;q=0.9, de' }, want: 'de' },
    { name: 'region matches language', input: { acceptLanguage: 'de-CH, en;q=0.5' }, want: 'de' },
    { name: 'q=0 ignored', input: { acceptLanguage: 'fr;q=0, de;q=0.1' }, want: 'de' },
    { name: 'wildcard ignored', input: { acceptLanguage: '*, fr;q=0.5' }, want: 'fr' },
    { name: 'unsupported only -> fallback', input: { acceptLanguage: 'es, it;q=0.8', uiLocales: 'ja' }, fallback: 'de', want: 'de' },
    { name: 'malformed q ignored', input: { acceptLanguage: 'fr;q=abc, de;q=0.2' }, want: 'de' },
    { name: 'case-insensitive', input: { uiLocales: 'DE-at', acceptLanguage: 'FR' }, want: 'de' },
    { name: 'case-insensitive Accept-Language', input: { acceptLanguage: 'FR-fr;Q=0.9' }, want: 'fr' },
    { name: 'preferred wins', input: { preferred: 'fr', uiLocales: 'de', acceptLanguage: 'en' }, want: 'fr' },
    { name: 'preferred case-insensitive', input: { preferred: 'DE' }, want: 'de' },
    { name: 'unsupported preferred ignored', input: { preferred: 'es', uiLocales: 'de' }, want: 'de' },
    { name: 'Arabic by region', input: { acceptLanguage: 'ar-EG, en;q=0.5' }, want: 'ar' },
    { name: 'Arabic preferred', input: { preferred: 'ar', acceptLanguage: 'de' }, want: 'ar' },
    { name: 'empty strings ignored', input: { preferred: '', uiLocales: '', acceptLanguage: '' }, want: 'en' },
  ];

  for (const row of table) {
    it(row.name, () => {
      expect(negotiateLocale(row.input, row.fallback)).to.equal(row.want);
    });
  }
});
