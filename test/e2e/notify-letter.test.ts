/**
 * POST /api/notify: the letter a person gets (From, Subject, the one link, separators, the
 * reader's language) and its one-click unsubscribe, as receivers send it.
 */
import { expect } from 'chai';

import { forms } from '../helpers/agent.ts';
import { ENCODED_WORD, encodedName, notifyCalls, startNotifyHarness } from '../helpers/notify.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

// On Redis (a Cluster in the Cluster pass: two scripts) and on the embedded
// store (one script, like a single Redis node): each runs its own path.
for (const embedded of [false, true]) describe(`POST /api/notify (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;

  setUp(() => startNotifyHarness(embedded), (started) => { h = started; });
  const { notify, connect, message, rawHeader, accountId, isNotificationTo } = notifyCalls(() => h);

  describe('one-click unsubscribe as receivers send it', () => {
    /** A letter to a newly connected person, and its List-Unsubscribe link. */
    async function linkFor(email: string): Promise<{ sub: string; link: string }> {
      const sub = await connect(email);
      await notify(message(sub));
      const letter = await h.smtp.waitFor(isNotificationTo(email));
      return { sub, link: rawHeader(letter, 'list-unsubscribe')!.slice(1, -1) };
    }

    const bodies: [string, () => RequestInit][] = [
      ['multipart/form-data (RFC 8058\'s recommended form)', () => {
        const form = new FormData();
        form.set('List-Unsubscribe', 'One-Click');
        return { body: form };
      }],
      ['a malformed multipart body', () => ({ headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, body: 'List-Unsubscribe=One-Click' })],
      ['a body of no known kind', () => ({ headers: { 'content-type': 'text/plain' }, body: 'List-Unsubscribe=One-Click' })],
    ];
    for (const [kind, init] of bodies) {
      it(`turns that category's email off for ${kind}`, async () => {
        const email = `unsub-${kind.replace(/\W+/g, '-').slice(0, 30).toLowerCase()}@example.com`;
        const { sub, link } = await linkFor(email);
        const res = await fetch(link, { method: 'POST', ...init() });
        expect(res.status).to.equal(200);
        expect(await res.text()).to.include('<html');
        expect((await notify(message(sub))).json).to.deep.equal({ inApp: true, email: false, skipped: null });
      });
    }
  });

  describe('the letter', () => {
    it('arrives from "<site> via <service>" with the title as subject, the one link, separators, and both unsubscribe headers', async () => {
      const sub = await connect('letter@example.com');
      const res = await notify(message(sub, {
        title: 'Order 1.2.3.4 from shop.com',
        body: 'Track it at https://shop.example/track?id=7 or write to help@shop.com.\nVersion 2.5 of report.pdf.',
        url: 'https://shop.example/orders/7',
      }));
      expect(res.json).to.deep.equal({ inApp: true, email: true, skipped: null });
      const letter = await h.smtp.waitFor(isNotificationTo('letter@example.com'));
      expect(letter.from?.value[0]?.name).to.equal('Shop via Sign-in service');
      expect(letter.subject).to.equal('Order 1\u2060.\u20602\u2060.\u20603\u2060.\u20604 from shop\u2060.\u2060com');
      const html = String(letter.html);
      const hrefs = [...html.matchAll(/<a\s[^>]*href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
      expect(hrefs.filter((href) => href.startsWith('https://shop.example'))).to.deep.equal(['https://shop.example/orders/7']);
      expect(html).to.include('https://shop.example/track?id=7');
      expect(letter.text).to.include('https://shop.example/track?id=7');
      expect(letter.text).to.include('help@shop\u2060.\u2060com.');
      expect(letter.text).to.include('Version 2.5 of report.pdf.');
      const unsubscribe = rawHeader(letter, 'list-unsubscribe')!;
      expect(unsubscribe).to.match(new RegExp(`^<${h.issuer}/unsubscribe/[\\w-]+\\.[\\w-]+>$`));
      expect(rawHeader(letter, 'list-unsubscribe-post')).to.equal('List-Unsubscribe=One-Click');
      expect(rawHeader(letter, 'list-id')).to.equal('Shop <n-site.notify.127.0.0.1>');
      expect(hrefs).to.include(unsubscribe.slice(1, -1));
    });

    it('sends the title as the Subject in encoded-words of our own: an encoded-word in it arrives as written', async () => {
      const sub = await connect('subject-word@example.com');
      expect((await notify(message(sub, { title: ENCODED_WORD }))).json).to.deep.equal({ inApp: true, email: true, skipped: null });
      const letter = await h.smtp.waitFor(isNotificationTo('subject-word@example.com'));
      expect(letter.subject).to.equal(ENCODED_WORD);
      // What the sink received: nothing but Q-encoded words, so a client decodes once.
      expect(rawHeader(letter, 'subject')).to.match(/^=\?UTF-8\?Q\?[^?\s]+\?=(?: =\?UTF-8\?Q\?[^?\s]+\?=)*$/);
      expect(letter.text).to.include(`\n${ENCODED_WORD}\n`);
    });

    it('gives a domain in the title the same separator in the Subject as in the body', async () => {
      const sub = await connect('subject-domain@example.com');
      await notify(message(sub, { title: 'Visit evil.com today' }));
      const letter = await h.smtp.waitFor(isNotificationTo('subject-domain@example.com'));
      const separated = 'Visit evil\u2060.\u2060com today';
      expect(letter.subject).to.equal(separated);
      expect(letter.text).to.include(`\n${separated}\n`);
      expect(String(letter.html)).to.match(new RegExp(`<h1 dir="auto"[^>]*>${separated}</h1>`));
    });

    it('sends a site name that is an encoded-word as written in the From name, not decoded', async () => {
      const sub = await connect('from-word@example.com', encodedName);
      expect((await notify(message(sub), { client: encodedName })).json).to.deep.equal({ inApp: true, email: true, skipped: null });
      const letter = await h.smtp.waitFor(isNotificationTo('from-word@example.com'));
      // A word joiner after each `=` of `=?`: invisible, and the name is encoded whole.
      expect(letter.from?.value[0]?.name).to.equal(`${ENCODED_WORD.replaceAll('=?', '=\u2060?')} via Sign-in service`);
    });

    it('speaks the reader’s language around the site’s own words', async () => {
      const sub = await connect('leser@example.com');
      await h.reference.accounts.setLocale(await accountId('leser@example.com'), 'de');
      await notify(message(sub, { title: 'Your order', body: 'It ships today.' }));
      const letter = await h.smtp.waitFor(isNotificationTo('leser@example.com'));
      expect(letter.from?.value[0]?.name).to.equal('Shop über Sign-in service');
      expect(letter.subject).to.equal('Your order');
      expect(String(letter.html)).to.match(/<html lang="de" dir="ltr"/);
      expect(letter.text).to.include('It ships today.');
      // The surrounding text is German, the site's words are not translated.
      expect(letter.text).to.include('Absender und Kategorien verwalten');
      expect(String(letter.html)).to.include('Kategorie: ');
    });

    it('one-click unsubscribe stops that category’s email from that site; a GET alone changes nothing', async () => {
      const sub = await connect('unsub@example.com');
      await notify(message(sub));
      const letter = await h.smtp.waitFor(isNotificationTo('unsub@example.com'));
      const link = rawHeader(letter, 'list-unsubscribe')!.slice(1, -1);

      const page = await fetch(link);
      expect(page.status).to.equal(200);
      expect((await notify(message(sub))).json, 'a GET changes nothing').to.deep.equal({ inApp: true, email: true, skipped: null });

      let done = '';
      for (let i = 0; i < 2; i += 1) {
        const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
        expect(res.status).to.equal(200);
        done = await res.text();
      }
      // The answer offers the rest: the whole category off, or the site muted.
      expect(forms(done).map((f) => [f.action, f.fields.do])).to.deep.equal([[link, 'category_off'], [link, 'mute']]);
      expect((await notify(message(sub))).json).to.deep.equal({ inApp: true, email: false, skipped: null });
      expect((await notify(message(sub, { category: 'product' }))).json).to.deep.equal({ inApp: true, email: false, skipped: null });

      // A forged or altered link does nothing.
      const forged = `${link.slice(0, -3)}abc`;
      expect((await fetch(forged, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' })).status).to.equal(400);

      // The page offers to mute the site entirely.
      expect((await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'do=mute' })).status).to.equal(200);
      expect((await notify(message(sub, { category: 'product' }))).json).to.deep.equal({ inApp: false, email: false, skipped: 'muted' });
    });
  });
});
