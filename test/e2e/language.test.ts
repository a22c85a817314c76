/**
 * The person's language is the account's from the first sign-in: the
 * language the sign-in pages were shown in (ui_locales or Accept-Language).
 * Letters, the console and the pages follow it without the person ever
 * opening the console; the console can change it.
 */
import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('lang-site', { client_name: 'Buchladen', client_uri: 'https://buch.example' });
const SERVICE = 'Sign-in service';

async function notify(h: Harness, sub: string, title: string): Promise<number> {
  const res = await documentedFetch(`${h.issuer}/api/notify`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ sub, category: 'transactional', title, body: 'Ihre Bestellung ist unterwegs.' }),
  });
  return res.status;
}

const letterTitled = (h: Harness, title: string) => h.smtp.waitFor((l: ParsedMail) => l.subject === title, 10_000);

describe('the person\'s language, from the first sign-in on', () => {
  describe('the reference provider\'s accounts', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('language', { clients: [site] });
    });
    after(() => h.close());

    it('a person who signs up in German gets a German notification letter without touching the console', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'de-DE,de;q=0.9,en;q=0.5';
      const { tokens } = await signIn(h, await discover(h, site), agent, 'deutsch@example.com');
      const account = await h.reference.accounts.findByEmail('deutsch@example.com');
      expect(account!.locale).to.equal('de');

      expect(await notify(h, tokens.claims()!.sub, 'Bestellung 42 versandt')).to.equal(202);
      const letter = await letterTitled(h, 'Bestellung 42 versandt');
      expect(letter.text).to.include(t('de', 'notify.sent_by', { siteName: 'Buchladen', serviceName: SERVICE }));
      expect(letter.text).to.include(t('de', 'notify.why', { siteName: 'Buchladen', serviceName: SERVICE }));
      expect(letter.text).to.not.include(t('en', 'notify.why', { siteName: 'Buchladen', serviceName: SERVICE }));
      expect(letter.html).to.include('<html lang="de" dir="ltr">');
      expect(letter.headers.get('content-language')).to.equal('de');
      expect(letter.headers.get('auto-submitted')).to.equal('auto-generated');
      expect(letter.from?.text).to.include(t('de', 'notify.from', { siteName: 'Buchladen', serviceName: SERVICE }));

      // The console is in German too, and says so in its language picker.
      agent.acceptLanguage = 'en';
      const console = await agent.follow(await agent.get(`${h.issuer}/console`));
      expect(console.status).to.equal(200);
      expect(console.body).to.include('<html lang="de" dir="ltr">');
      expect(console.body).to.match(/<option value="de" lang="de" selected>Deutsch<\/option>/);
    });

    it('keeps the first language over later sign-ins in other languages; the console changes it', async () => {
      const email = 'erst-deutsch@example.com';
      const config = await discover(h, site);
      const agent = new Agent();
      agent.acceptLanguage = 'de';
      await signIn(h, config, agent, email);
      const french = new Agent();
      french.acceptLanguage = 'fr';
      const { tokens } = await signIn(h, config, french, email);
      expect((await h.reference.accounts.findByEmail(email))!.locale).to.equal('de');

      const page = await french.follow(await french.get(`${h.issuer}/console`));
      expect(page.body).to.include('<html lang="de" dir="ltr">');
      french.headers.origin = h.issuer;
      const saved = await french.submit(page, formFor(page.body, '/console/language'), { locale: 'fr' });
      expect(saved.status).to.equal(303);
      expect(await notify(h, tokens.claims()!.sub, 'Commande 7')).to.equal(202);
      const letter = await letterTitled(h, 'Commande 7');
      expect(letter.headers.get('content-language')).to.equal('fr');
      expect(letter.text).to.include(t('fr', 'notify.why', { siteName: 'Buchladen', serviceName: SERVICE }));
    });

    it('writes the code letter of a returning person in their account\'s language, naming the site', async () => {
      const email = 'deutsch@example.com';
      const agent = new Agent();
      agent.acceptLanguage = 'en';
      const { code } = await signIn(h, await discover(h, site), agent, email);
      const letter = h.smtp.letters.find((l) => l.subject?.startsWith(code))!;
      expect(letter.subject).to.equal(t('de', 'letter.subject', { code, serviceName: SERVICE }));
      expect(letter.text).to.include(t('de', 'letter.intro_site', { serviceName: SERVICE, clientName: 'Buchladen' }));
      expect(letter.headers.get('content-language')).to.equal('de');
      expect(letter.headers.get('auto-submitted')).to.equal('auto-generated');
    });
  });

  describe('a host whose accounts have no language', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('language-host', {
        clients: [site],
        plugin: {
          // The host knows the address only.
          contacts: async (accountId) => {
            const account = await h.reference.accounts.get(accountId);
            return account && { email: account.email };
          },
        },
      });
    });
    after(() => h.close());

    it('keeps the language of the first sign-in in the plugin\'s preferences, and the letters follow it', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'fr-CH, en;q=0.5';
      const { tokens } = await signIn(h, await discover(h, site), agent, 'hote@example.com');
      const accountId = tokens.claims()!.sub;
      expect(await h.reference.plugin.preferences.locale(accountId)).to.equal('fr');
      expect(await notify(h, accountId, 'Colis parti')).to.equal(202);
      const letter = await letterTitled(h, 'Colis parti');
      expect(letter.headers.get('content-language')).to.equal('fr');
      expect(letter.text).to.include(t('fr', 'notify.stop'));
    });
  });
});
