/**
 * Security notices as the host's choice, in the host's words (issue 38;
 * README "Options" `securityNotices`, docs/security.md "Security notices"):
 * a kind turned off gives no inbox entry and no letter (the theft notice
 * cannot be turned off); the letters' sentence on how people sign in is the
 * host's, in each language, in the letter and the inbox entry alike. The
 * reference provider's own wording (emailed codes) is its configuration:
 * test/e2e/security-notices.test.ts.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { createSignoutNotify } from '../../src/index.ts';
import { LOCALES, t, type Locale } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { browser, FIREFOX, inboxOf, lettersTo, SAFARI } from '../helpers/notices.ts';
import { discover, lettersSettled, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const SERVICE = 'Sign-in service';

/** How a host whose people sign in with a password says it, in each language. */
const PASSWORD_CHECK: Record<Locale, string> = {
  en: 'Change your Example password if you did not do this.',
  de: 'Ändern Sie Ihr Example-Passwort, wenn Sie das nicht waren.',
  fr: 'Changez votre mot de passe Example si ce n’était pas vous.',
  ar: 'غيّر كلمة مرور Example إن لم تكن أنت.',
};

describe('security notices as the host\'s choice: a kind turned off tells nothing', () => {
  let h: Harness;
  let config: oidc.Configuration;
  const site = siteClient('notices-off-site');

  before(async () => {
    h = await startHarness('notices-off', { clients: [site], plugin: { securityNotices: { new_browser: false, passkey_added: false } } });
    config = await discover(h, site);
  });
  after(async () => h?.close());

  it('with new_browser off, a sign-in from a new browser gives no inbox entry and no letter', async () => {
    const email = 'no-new-browser@example.com';
    const laptop = browser(FIREFOX);
    await signIn(h, config, laptop, email);
    await signIn(h, config, browser(SAFARI), email);
    await signIn(h, config, browser(SAFARI), email);
    expect(await lettersSettled(h)).to.equal(0);
    expect(lettersTo(h, email, t('en', 'notice.new_browser.subject', { serviceName: SERVICE }))).to.deep.equal([]);
    expect((await inboxOf(h, laptop)).filter((i) => i.notice)).to.deep.equal([]);
  });

  it('a host\'s own notice of a kind turned off answers "off" and tells nothing; the kinds left on are told', async () => {
    const email = 'no-passkey-added@example.com';
    const laptop = browser(FIREFOX);
    await signIn(h, config, laptop, email);
    const id = (await h.reference.accounts.findByEmail(email))!.accountId;
    expect(await h.reference.plugin.securityNotice(id, 'passkey_added', { name: 'Work key', ref: 'cred-1' })).to.equal('off');
    expect(await h.reference.plugin.securityNotice(id, 'passkey_removed', { name: 'Work key', ref: 'cred-1' })).to.equal('given');
    expect((await inboxOf(h, laptop)).map((i) => i.notice)).to.deep.equal(['passkey_removed']);
  });

  it('refuses to turn the theft notice off, and a sign-in wording that is not a sentence per language the service speaks, naming the option', () => {
    const contacts = async () => undefined;
    const made = (securityNotices: unknown) => () => createSignoutNotify({ contacts, securityNotices } as Parameters<typeof createSignoutNotify>[0]);
    expect(made({ theft: false })).to.throw(TypeError, 'oidc-signout-notify: invalid option "securityNotices.theft": the theft notice cannot be turned off');
    for (const bad of [{ es: 'Revise su contraseña.' }, { en: '' }, { en: 'x'.repeat(301) }, 'Check your password.', ['en']]) {
      expect(made({ signInCheck: bad }), JSON.stringify(bad)).to.throw(TypeError, 'oidc-signout-notify: invalid option "securityNotices.signInCheck": must be a function locale => sentence, or one sentence (1 to 300 characters) per language: { en?, de?, fr?, ar? }');
    }
    expect(made({ newBrowser: false })).to.throw(TypeError, /invalid option "securityNotices": .*newBrowser/);
  });
});

describe('security notices in the host\'s words: how its people sign in, in each language', () => {
  let h: Harness;
  let config: oidc.Configuration;
  const site = siteClient('notices-words-site', { client_name: 'Words Shop' });

  before(async () => {
    h = await startHarness('notices-host-words', { clients: [site], plugin: { securityNotices: { signInCheck: PASSWORD_CHECK } } });
    config = await discover(h, site);
  });
  after(async () => h?.close());

  it('a new browser\'s letter and inbox entry say the host\'s sentence in the person\'s language, never the reference provider\'s emailed codes', async () => {
    for (const locale of LOCALES) {
      const email = `host-words-${locale}@example.com`;
      const laptop = browser(FIREFOX, locale);
      await signIn(h, config, laptop, email);
      await signIn(h, config, browser(SAFARI, locale), email);
      const subject = t(locale, 'notice.new_browser.subject', { serviceName: SERVICE });
      const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
      expect(letter.text, locale).to.include(`${t(locale, 'notice.not_you')} ${PASSWORD_CHECK[locale]}`);
      expect(letter.html, locale).to.include(escapeHtml(PASSWORD_CHECK[locale]));
      expect(letter.text, locale).to.not.include(t(locale, 'login.check_email'));
      const [item] = (await inboxOf(h, laptop)).filter((i) => i.notice === 'new_browser');
      expect(item!.body.split('\n').at(-1), locale).to.equal(`${t(locale, 'notice.not_you')} ${PASSWORD_CHECK[locale]}`);
    }
  });

  it('the theft letter lists the host\'s sentence among what to check', async () => {
    const email = 'host-words-theft@example.com';
    const agent = browser(FIREFOX, 'fr');
    const { tokens } = await signIn(h, config, agent, email);
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    await oidc.refreshTokenGrant(config, next.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    const subject = t('fr', 'theft.subject', { siteName: 'Words Shop', serviceName: SERVICE });
    const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    expect(letter.text).to.include(`- ${PASSWORD_CHECK.fr}`);
    expect(letter.text).to.not.include(t('fr', 'login.check_email'));
  });
});
