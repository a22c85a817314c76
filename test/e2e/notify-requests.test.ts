/**
 * POST /api/notify: who may call it (client authentication), what a request must be
 * (validation, every error named), and the events it tells plugin.on listeners.
 */
import { expect } from 'chai';

import { LETTER_EVENT, NOTIFIED_EVENT, type LetterEvent, type NotifiedEvent } from '../../src/index.ts';
import { encoded, expired, notifyCalls, postAuth, site, startNotifyHarness, type Answer } from '../helpers/notify.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

// On Redis (a Cluster in the Cluster pass: two scripts) and on the embedded
// store (one script, like a single Redis node): each runs its own path.
for (const embedded of [false, true]) describe(`POST /api/notify (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;

  setUp(() => startNotifyHarness(embedded), (started) => { h = started; });
  const { basic, notify, connect, message, isNotificationTo, lettersTo } = notifyCalls(() => h);

  it('tells plugin.on listeners of each 202 (notified) and of each letter\'s outcome (letter), and nothing of a refused request', async () => {
    const sub = await connect('events@example.com');
    const notified: NotifiedEvent[] = [];
    const letters: LetterEvent[] = [];
    const offNotified = h.reference.plugin.on(NOTIFIED_EVENT, (e) => notified.push(e));
    const offLetter = h.reference.plugin.on(LETTER_EVENT, (e) => letters.push(e));
    try {
      expect((await notify(message(sub, { title: 'Events' }))).status).to.equal(202);
      expect((await notify(message(sub, { category: 'weather' }))).status).to.equal(400);
      expect(notified).to.deep.equal([{ clientId: site.client_id, result: { inApp: true, email: true, skipped: null } }]);
      const letter = await h.smtp.waitFor((l) => isNotificationTo('events@example.com')(l) && l.subject === 'Events');
      const id = String(letter.headers.get('x-notification-id'));
      for (let i = 0; i < 50 && !letters.some((e) => e.notificationId === id); i += 1) await new Promise((r) => setTimeout(r, 20));
      expect(letters.filter((e) => e.notificationId === id)).to.deep.equal([{ notificationId: id, outcome: 'sent' }]);
    } finally {
      offNotified();
      offLetter();
    }
  });

  describe('client authentication', () => {
    it('refuses a missing header, a wrong secret, an unknown client and a public client with 401 invalid_client and WWW-Authenticate: Basic', async () => {
      const sub = await connect('auth1@example.com');
      const cases: [string | null, string][] = [
        [null, 'HTTP Basic client authentication is required'],
        ['Bearer abc', 'HTTP Basic client authentication is required'],
        [basic('n-site', 'wrong-secret'), 'client authentication failed'],
        [basic('nobody', 'whatever'), 'client authentication failed'],
        [basic('n-public', ''), 'client authentication failed'],
        [basic('n-public', 'anything'), 'client authentication failed'],
        // Not form-encoding (RFC 6749 appendix B): a '%' without two hex digits.
        [`Basic ${Buffer.from('n-site:100%').toString('base64')}`, 'HTTP Basic client authentication is required'],
      ];
      for (const [auth, description] of cases) {
        const res = await notify(message(sub), { auth });
        expect(res.status, String(auth)).to.equal(401);
        expect(res.json).to.deep.equal({ error: 'invalid_client', error_description: description });
        expect(res.headers.get('www-authenticate')).to.match(/^Basic realm="notify"/);
      }
      expect(lettersTo('auth1@example.com')).to.have.length(0);
    });

    it('refuses a client whose secret has expired, and accepts one registered for client_secret_post', async () => {
      const res = await notify(message('whoever'), { client: expired });
      expect({ status: res.status, json: res.json }).to.deep.equal({ status: 401, json: { error: 'invalid_client', error_description: 'client secret expired' } });
      const sub = await connect('post@example.com', postAuth);
      expect((await notify(message(sub, { category: 'product' }), { client: postAuth })).status).to.equal(202);
    });

    it('decodes form-encoded credentials (RFC 6749 appendix B)', async () => {
      const sub = await connect('auth2@example.com', encoded);
      expect((await notify(message(sub), { client: encoded })).status).to.equal(202);
    });
  });

  describe('request validation', () => {
    let sub: string;
    before(async () => { sub = await connect('valid@example.com'); });

    const invalid = (description: string) => ({ status: 400, json: { error: 'invalid_request', error_description: description } });
    const check = async (answer: Promise<Answer>, expected: { status: number; json: unknown }) => {
      const res = await answer;
      expect({ status: res.status, json: res.json }).to.deep.equal(expected);
    };

    it('answers 400 invalid_request naming the field for every malformed request', async () => {
      await check(notify(message(sub), { type: 'text/plain' }), invalid('content type must be application/json'));
      await check(notify(undefined, { raw: '{"sub":' }), invalid('body is not valid JSON'));
      await check(notify([message(sub)]), invalid('body must be a JSON object'));
      await check(notify(message(sub, { body: 'x'.repeat(17 * 1024) })), invalid('request body exceeds 16384 bytes'));
      await check(notify({ sub, category: 'product', body: 'b' }), invalid('title: is required'));
      await check(notify({ sub, category: 'product', title: 't' }), invalid('body: is required'));
      await check(notify({ category: 'product', title: 't', body: 'b' }), invalid('sub: is required'));
      await check(notify({ sub, title: 't', body: 'b' }), invalid('category: is required'));
      await check(notify(message(sub, { title: 42 })), invalid('title: must be a string'));
      await check(notify(message(sub, { title: '' })), invalid('title: must not be empty'));
      await check(notify(message(sub, { title: 'x'.repeat(121) })), invalid('title: at most 120 characters'));
      await check(notify(message(sub, { body: 'x'.repeat(2001) })), invalid('body: at most 2000 characters'));
      await check(notify(message(sub, { title: 'a\nb' })), invalid('title: must not contain control characters'));
      await check(notify(message(sub, { body: 'bell \u0007' })), invalid('body: must not contain control characters other than newline and tab'));
      await check(notify(message(sub, { body: 'a\r\nb' })), invalid('body: must not contain control characters other than newline and tab'));
      await check(notify(message(sub, { url: 5 })), invalid('url: must be a string'));
      await check(notify(message(sub, { priority: 'high' })), invalid('unknown field "priority"'));
      await check(notify(message(sub, { priority: 'high', icon: 'x' })), invalid('unknown field "priority", "icon"'));
      await check(notify(message('')), invalid('sub: must not be empty'));
      await check(notify(message(sub), { headers: { 'idempotency-key': 'a b' } }), invalid('Idempotency-Key: at most 255 visible ASCII characters'));
    });

    it('refuses every JSON body that is not an object, and holds the length limits of sub, url and Idempotency-Key at their edges', async () => {
      for (const raw of ['null', '[]', '"a string"', '42', 'true']) {
        await check(notify(undefined, { raw }), invalid('body must be a JSON object'));
      }
      await check(notify(message('s'.repeat(256))), invalid('sub: at most 255 characters'));
      // 255 is a sub the site may have: well formed, only unknown here.
      await check(notify(message('s'.repeat(255))), { status: 403, json: { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' } });
      const longUrl = (n: number) => `https://shop.example/${'p'.repeat(n - 'https://shop.example/'.length)}`;
      await check(notify(message(sub, { category: 'product', url: longUrl(2049) })), invalid('url: at most 2048 characters'));
      expect((await notify(message(sub, { category: 'product', url: longUrl(2048) }))).status).to.equal(202);
      await check(notify(message(sub, { category: 'product' }), { headers: { 'idempotency-key': 'k'.repeat(256) } }), invalid('Idempotency-Key: at most 255 visible ASCII characters'));
      expect((await notify(message(sub, { category: 'product' }), { headers: { 'idempotency-key': 'k'.repeat(255) } })).status).to.equal(202);
    });

    it('answers with Cache-Control: no-store, the 202 and every error alike', async () => {
      const answers = [
        await notify(message(sub, { category: 'product' })),
        await notify(message(sub), { type: 'text/plain' }),
        await notify(message(sub), { auth: null }),
        await notify(message('nobody-here')),
      ];
      expect(answers.map((a) => [a.status, a.headers.get('cache-control')])).to.deep.equal([[202, 'no-store'], [400, 'no-store'], [401, 'no-store'], [403, 'no-store']]);
    });

    it('counts characters as code points: 120 emoji fit the title, 2000 with newlines and tabs the body', async () => {
      const res = await notify(message(sub, { category: 'product', title: '🎉'.repeat(120), body: `${'a\tb\n'.repeat(500)}` }));
      expect(res.status).to.equal(202);
    });

    it('answers 400 unknown_category for a category outside the three', async () => {
      await check(notify(message(sub, { category: 'account' })), { status: 400, json: { error: 'unknown_category', error_description: 'category must be one of transactional, product, promotions' } });
    });

    it('accepts only https URLs on the site’s own host; every trick is 400 url_not_allowed', async () => {
      const refused = { status: 400, json: { error: 'url_not_allowed', error_description: 'url must be an https address on the site’s own host' } };
      for (const url of [
        'http://shop.example/orders/1',
        'https://evil.example/',
        'https://shop.example.evil.example/',
        'https://evilshop.example/',
        'https://shop.example@evil.example/',
        'https://user:pw@shop.example/',
        'https://evil.example\\@shop.example/',
        'https://evil.example\\.shop.example/',
        'https://shop.example:8443/',
        'https://shop.example./',
        'https://xn--shp-6cd.example/',
        'https://ѕhop.example/',
        'javascript:alert(1)//https://shop.example/',
        'data:text/html,<a href=https://shop.example>',
        'ftp://shop.example/',
        '//shop.example/orders',
        '/orders/1',
        'not a url',
        ' https://shop.example/',
        'https://shop.example/\nLocation: https://evil.example',
      ]) {
        await check(notify(message(sub, { category: 'product', url })), refused);
      }
      for (const url of ['https://shop.example/orders/1?x=1#top', 'https://SHOP.example:443/a', 'https://127.0.0.1:9/n-site/orders']) {
        expect((await notify(message(sub, { category: 'product', url }))).status, url).to.equal(202);
      }
      await check(notify(message(sub, { category: 'product', url: 'https://other.example/' })), refused);
    });
  });
});
