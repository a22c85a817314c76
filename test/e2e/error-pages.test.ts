/**
 * One not-found and error page for every route of the plugin and the
 * reference provider: HTML in the reader's language, with a title, `lang`,
 * and a way on (the console; the site when known). No page shows text taken
 * from its URL as the service's own words (issue 13 item 9).
 */
import { expect } from 'chai';

import { t, type Locale } from '../../src/i18n/index.ts';
import { Agent } from '../helpers/agent.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('errors-site');
const PLANTED = 'Your account is locked call 0800 555 0100 now';

describe('error and not-found pages', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('error-pages', { clients: [site] });
  });
  after(() => h.close());

  function expectPage(body: string, locale: Locale, title: string, message: string, status: number): void {
    expect(body).to.include(`<html lang="${locale}" dir="ltr">`);
    expect(body).to.include(`<title>${title} — Sign-in service</title>`);
    expect(body).to.include(`<h1>${title}</h1>`);
    expect(body).to.include(`<p role="alert">${message}</p>`);
    expect(body).to.include(t(locale, 'error.status', { status }));
    expect(body).to.include(`href="${h.issuer}/console">${t(locale, 'error.back_console')}</a>`);
  }

  it('/console/callback never shows the error_description it carries', async () => {
    const agent = new Agent();
    for (const [error, key] of [['access_denied', 'error.callback_denied'], ['server_error', 'error.callback_failed'], ['', 'error.callback_failed']] as const) {
      const res = await agent.get(`${h.issuer}/console/callback?${new URLSearchParams({ error, error_description: PLANTED, state: '/console' })}`);
      expect(res.status, error).to.equal(400);
      expectPage(res.body, 'en', t('en', 'error.title'), t('en', key), 400);
      expect(res.body).to.not.include('0800');
    }
  });

  it('oidc-provider\'s errors on pages: the service\'s sentence, never the description; a way back to a known site', async () => {
    const agent = new Agent();
    agent.acceptLanguage = 'de';
    const unknownClient = await agent.get(`${h.issuer}/auth?${new URLSearchParams({ client_id: PLANTED, response_type: 'code', scope: 'openid' })}`);
    expect(unknownClient.status).to.equal(400);
    expectPage(unknownClient.body, 'de', t('de', 'error.title'), t('de', 'error.code.invalid_client'), 400);
    expect(unknownClient.body).to.not.include('0800');

    const badReturn = await agent.get(`${h.issuer}/auth?${new URLSearchParams({ client_id: site.client_id, response_type: 'code', scope: 'openid', redirect_uri: `https://evil.example/${encodeURIComponent(PLANTED)}` })}`);
    expect(badReturn.status).to.equal(400);
    expectPage(badReturn.body, 'de', t('de', 'error.title'), t('de', 'error.code.invalid_redirect_uri'), 400);
    expect(badReturn.body).to.include(`<a class="button primary" href="https://site.example/">${t('de', 'error.back_site', { clientName: site.client_name! })}</a>`);
    expect(badReturn.body).to.not.include('0800').and.not.include('evil.example');
  });

  const unknown = ['/console/nothing-here', `/console/${encodeURIComponent(PLANTED)}`, '/unsubscribe', '/unsubscribe/a/b', '/nothing', `/interaction/x/${encodeURIComponent(PLANTED)}`, '/session/end/elsewhere'];
  for (const path of unknown) {
    it(`answers ${path.slice(0, 40)} with the not-found page (HTML, lang, title, way on)`, async () => {
      for (const locale of ['en', 'fr'] as const) {
        const agent = new Agent();
        agent.acceptLanguage = locale;
        const res = await agent.get(`${h.issuer}${path}`);
        expect(res.status, `${path} ${locale}`).to.equal(404);
        expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
        expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
        expectPage(res.body, locale, t(locale, 'error.not_found'), t(locale, 'error.not_found_body'), 404);
        expect(res.body).to.not.include('0800');
      }
    });
  }

  it('answers unknown JSON routes with JSON', async () => {
    for (const path of ['/console/api/nothing', '/api/nothing']) {
      const res = await fetch(`${h.issuer}${path}`);
      expect(res.status, path).to.equal(404);
      expect(await res.json()).to.deep.equal({ error: 'not_found', error_description: 'no such route' });
    }
  });

  it('answers an unknown interaction with the "took too long" sentence and the console as a way on', async () => {
    const res = await new Agent().get(`${h.issuer}/interaction/${encodeURIComponent(PLANTED)}`);
    expect(res.status).to.equal(400);
    expectPage(res.body, 'en', t('en', 'error.title'), t('en', 'error.session_expired'), 400);
  });

  it('answers a page route called with a method it does not take with the not-found page, not text/plain', async () => {
    for (const method of ['PUT', 'GET']) {
      const res = await new Agent().request(method, `${h.issuer}/console/language`);
      expect(res.status, method).to.equal(404);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expectPage(res.body, 'en', t('en', 'error.not_found'), t('en', 'error.not_found_body'), 404);
    }
  });
});
