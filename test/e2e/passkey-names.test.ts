/**
 * Names and addresses (issue 28; docs/security.md "Names and addresses"): a
 * passkey-only account's name labels it where an address would (the
 * console, the account chooser, the sign-out question), so a name that looks
 * like an address is refused at sign-up with a clear message in the
 * reader's language, before any WebAuthn ceremony starts.
 */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { begin, site } from '../helpers/sign-in-flow.ts';

describe('a passkey-only account\'s name that looks like an address', function () {
  this.timeout(30_000);

  let h: Harness;
  setUp(() => startHarness('passkey-names', { clients: [site], host: 'localhost' }), (started) => { h = started; });

  /** The sign-up page's request for WebAuthn options with this name: the status and the JSON answer. */
  async function options(locale: string, name: string) {
    const flow = await begin(h, new Agent(), { ui_locales: locale });
    const signUp = await flow.agent.get(new URL(/href="([^"]*\/passkey\/new)"/.exec(flow.page.body)![1]!, flow.page.url).href);
    expect(signUp.status).to.equal(200);
    const form = formFor(signUp.body, '/passkey/new');
    const res = await flow.agent.request('POST', `${new URL(form.action, signUp.url).href}/options`, { csrf: form.fields.csrf!, name }, { origin: h.issuer });
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  }

  it('is refused with its message in every language (someone@example.test, a FULLWIDTH @ too); a plain name gets options', async () => {
    for (const locale of LOCALES) {
      for (const name of ['someone@example.test', 'victim\uFF20bar.test']) {
        expect(await options(locale, name), `${locale} ${name}`).to.deep.equal({
          status: 400, body: { error: 'invalid_request', message: t(locale, 'passkey.error.name_address') },
        });
      }
    }
    const fine = await options('en', 'Someone');
    expect(fine.status).to.equal(200);
    expect((fine.body.user as { name: string }).name).to.equal('Someone');
  });
});
