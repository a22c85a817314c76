/**
 * The reference provider's emailed-code sign-in: what its pages refuse, with 400 and no
 * letter (a missing or wrong csrf, an invalid address, a POST without the interaction's cookie or to another).
 */
import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { startHarness, type Harness } from '../helpers/reference.ts';
import { alert, begin, lettersTo, settle, site } from '../helpers/sign-in-flow.ts';

describe('reference provider, emailed-code sign-in (Redis)', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('sign-in-refusals', { clients: [site] });
  });
  after(() => h.close());

  it('refuses a missing or wrong csrf on the email form with 400 and sends no letter', async () => {
    const email = 'csrf@example.com';
    const flow = await begin(h, new Agent());
    const other = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const action = new URL(form.action, flow.page.url).href;
    const otherCsrf = formFor(other.page.body, '/email').fields.csrf!;
    expect(otherCsrf).to.not.equal(form.fields.csrf);
    const attempts: Record<string, Record<string, string>> = {
      missing: { email },
      empty: { email, csrf: '' },
      wrong: { email, csrf: 'A'.repeat(43) },
      'another interaction': { email, csrf: otherCsrf },
    };
    for (const [what, fields] of Object.entries(attempts)) {
      const res = await flow.agent.request('POST', action, fields);
      expect(res.status, what).to.equal(400);
      expect(res.location, what).to.equal(undefined);
      expect(res.body, what).to.include(`<p role="alert">${t('en', 'error.form_expired')}</p>`);
      expect(res.body, what).to.not.include('name="code"');
    }
    await settle();
    expect(lettersTo(h, email)).to.have.length(0);
    expect(await h.reference.plugin.store.hmget(`${h.prefix}login-code:{${flow.page.url.split('/').at(-1)}}`, ['email'])).to.deep.equal([null]);
  });

  for (const [locale, params] of [['en', {}], ['de', { ui_locales: 'de' }]] as const) {
    it(`refuses an invalid address with 400 and the ${locale} message, and sends no letter`, async () => {
      const sent = h.smtp.letters.length;
      const flow = await begin(h, new Agent(), params);
      const res = await flow.agent.submit(flow.page, formFor(flow.page.body, '/email'), { email: 'not-an-address' });
      expect(res.status).to.equal(400);
      expect(res.body).to.include(`<html lang="${locale}"`);
      expect(res.body).to.include(alert('email-error', t(locale, 'login.error.invalid_email')));
      expect(formFor(res.body, '/email').fields.email).to.equal('not-an-address');
      await settle();
      expect(h.smtp.letters.length).to.equal(sent);
    });
  }

  it('answers a POST to an interaction without its cookie with a 400 HTML error page, not a 500', async () => {
    const flow = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const stranger = new Agent();
    const res = await stranger.request('POST', new URL(form.action, flow.page.url).href, { ...form.fields, email: 'stranger@example.com' });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.body).to.include('<html lang="en" dir="ltr">');
    expect(res.body).to.include(`<h1>${t('en', 'error.title')}</h1>`);
    expect(res.body).to.include(`<p role="alert">${t('en', 'error.session_expired')}</p>`);
    await settle();
    expect(lettersTo(h, 'stranger@example.com')).to.have.length(0);
  });

  it('refuses a POST whose URL names another interaction than the cookie', async () => {
    const flow = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const elsewhere = new URL(form.action.replace(/\/interaction\/[^/]+\//, '/interaction/someone-else/'), flow.page.url).href;
    const res = await flow.agent.request('POST', elsewhere, { ...form.fields, email: 'mismatch@example.com' });
    expect(res.status).to.equal(400);
    expect(res.body).to.include(`<p role="alert">${t('en', 'error.session_expired')}</p>`);
    await settle();
    expect(lettersTo(h, 'mismatch@example.com')).to.have.length(0);
  });
});
