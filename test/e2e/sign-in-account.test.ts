/**
 * The reference provider's emailed-code sign-in: the account it creates and finds again,
 * the reader's language on its pages and in the letter, and consent (Allow and Deny).
 */
import { expect } from 'chai';

import { t, type Locale } from '../../src/i18n/index.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { discover, signIn, startHarness, type Harness } from '../helpers/reference.ts';
import { begin, isCallback, REDIRECT, requestCode, SERVICE, site } from '../helpers/sign-in-flow.ts';

describe('reference provider, emailed-code sign-in (Redis)', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('sign-in-account', { clients: [site] });
  });
  after(() => h.close());

  it('creates the account on the first sign-in and reuses it on the next (same sub)', async () => {
    const email = 'returning@example.com';
    const config = await discover(h, site);
    expect(await h.reference.accounts.findByEmail(email)).to.equal(undefined);
    const first = await signIn(h, config, new Agent(), email);
    const account = await h.reference.accounts.findByEmail(email);
    expect(account).to.include({ email });
    expect(account!.accountId).to.be.a('string').and.have.length.greaterThan(0);
    expect(first.tokens.claims()!.sub).to.equal(account!.accountId);
    const second = await signIn(h, config, new Agent(), email);
    expect(second.tokens.claims()!.sub).to.equal(account!.accountId);
    expect(await h.reference.accounts.findByEmail(email)).to.deep.equal(account);
    // The browser stays known for the address 180 days after its last sign-in (docs/security.md).
    const known = await h.redis!.pttl(`${h.prefix}login-device:{${email}}`);
    expect(known).to.be.within(180 * 86_400_000 - 60_000, 180 * 86_400_000);
    // Two browsers, each known by a 22-character HMAC of its id, never the id itself.
    const browsers = await h.redis!.hkeys(`${h.prefix}login-device:{${email}}`);
    expect(browsers).to.have.length(2);
    for (const browser of browsers) expect(browser).to.match(/^[\w-]{22}$/);
  });

  const languages: { name: string; locale: Locale; setup(agent: Agent): Record<string, string> }[] = [
    { name: 'ui_locales=de', locale: 'de', setup: () => ({ ui_locales: 'de' }) },
    { name: 'Accept-Language fr-CH, en;q=0.5', locale: 'fr', setup: (agent) => { agent.acceptLanguage = 'fr-CH, en;q=0.5'; return {}; } },
  ];
  for (const { name, locale, setup } of languages) {
    it(`speaks the reader's language (${name}) on the pages and in the letter`, async () => {
      const email = `lang-${locale}@example.com`;
      const agent = new Agent();
      const flow = await begin(h, agent, setup(agent));
      expect(flow.page.body).to.include(`<html lang="${locale}" dir="ltr">`);
      expect(flow.page.body).to.include(`<h1>${t(locale, 'login.title')}</h1>`);
      const { codePage, code, letter } = await requestCode(h, flow, email);
      expect(codePage.body).to.include(`<html lang="${locale}" dir="ltr">`);
      expect(codePage.body).to.include(`<h1>${t(locale, 'code.title')}</h1>`);
      expect(letter.subject).to.equal(t(locale, 'letter.subject', { code, serviceName: SERVICE }));
      expect(letter.text).to.include(t(locale, 'letter.intro_site', { serviceName: SERVICE, clientName: site.client_name! }));
    });
  }

  it('asks for consent with one Allow and one Deny form; Deny returns access_denied to the site', async () => {
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, 'deny@example.com');
    const consent = await flow.agent.follow(await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code }), isCallback);
    expect(consent.status).to.equal(200);
    expect(consent.url).to.match(new RegExp(`^${h.issuer}/interaction/[\\w-]+$`));
    expect(consent.url).to.not.equal(flow.page.url);
    expect(consent.body).to.include(`<h1>${t('en', 'consent.title', { clientName: site.client_name! })}</h1>`);
    expect(consent.body).to.include('<strong>deny@example.com</strong>');
    // What is asked: exactly the two requested scopes, in people's words.
    expect(consent.body).to.include(`<ul class="list">\n<li>${t('en', 'consent.scope.openid')}</li><li>${t('en', 'consent.scope.email')}</li>\n</ul>`);
    expect(consent.body.match(/<li>/g)).to.have.length(2);
    const all = forms(consent.body);
    expect(all).to.have.length(2);
    expect(all.filter((f) => f.action.endsWith('/confirm'))).to.have.length(1);
    expect(all.filter((f) => f.action.endsWith('/abort'))).to.have.length(1);
    expect(all.every((f) => f.method === 'post' && Object.keys(f.fields).join() === 'csrf')).to.equal(true);

    const denied = await flow.agent.follow(await flow.agent.submit(consent, formFor(consent.body, '/abort')), isCallback);
    expect(denied.status).to.equal(303);
    expect(denied.url).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));
    expect(denied.location).to.be.a('string');
    const callback = new URL(denied.location!);
    expect(`${callback.origin}${callback.pathname}`).to.equal(REDIRECT);
    expect(Object.fromEntries(callback.searchParams)).to.deep.equal({
      error: 'access_denied',
      error_description: 'the person denied access',
      state: flow.state,
      iss: h.issuer,
    });
  });
});
