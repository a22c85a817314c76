import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import * as oidc from 'openid-client';

import { Agent, forms } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { LETTER_EVENT, NOTIFIED_EVENT, type LetterEvent, type NotifiedEvent } from '../../src/index.ts';

const site = siteClient('n-site', { client_name: 'Shop', client_uri: 'https://shop.example' });
const other = siteClient('n-other', { client_uri: 'https://other.example' });
const pairwise = siteClient('n-pairwise', { subject_type: 'pairwise', client_uri: 'https://pw.example' });
const publicSite = siteClient('n-public', { token_endpoint_auth_method: 'none', client_secret: undefined });
// RFC 6749 appendix B: id and secret are form-encoded before Basic.
const encoded = siteClient('n:enc', { client_secret: 'a+b:c%d e/0123456789abcdef', client_uri: 'https://enc.example' });
const burst = siteClient('n-burst', { client_uri: 'https://burst.example' });
const expired = siteClient('n-expired', { client_secret_expires_at: 1 });
const postAuth = siteClient('n-post', { token_endpoint_auth_method: 'client_secret_post', client_uri: 'https://post.example' });
// An RFC 2047 encoded-word of "Verify now at evil.com": a client decoding it a second time would show that.
const ENCODED_WORD = '=?UTF-8?B?VmVyaWZ5IG5vdyBhdCBldmlsLmNvbQ==?=';
const encodedName = siteClient('n-encoded', { client_name: ENCODED_WORD, client_uri: 'https://encoded.example' });

type Answer = { status: number; headers: Headers; json: Record<string, unknown> | undefined };

// On Redis (a Cluster in the Cluster pass: two scripts) and on the embedded
// store (one script, like a single Redis node): each runs its own path.
for (const embedded of [false, true]) describe(`POST /api/notify (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;
  const noEmail = new Set<string>();

  before(async () => {
    h = await startHarness('notify', {
      embedded,
      clients: [site, other, pairwise, publicSite, encoded, expired, postAuth, encodedName],
      plugin: {
        letters: { backoffMs: 50 },
        contacts: async (accountId: string) => {
          const account = await h.reference.accounts.get(accountId);
          if (!account) return undefined;
          return noEmail.has(account.email ?? '') ? { locale: account.locale } : { email: account.email, locale: account.locale };
        },
      },
    });
  });
  after(() => h.close());

  function basic(id: string, secret: string): string {
    const form = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
    return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
  }

  async function notify(body: unknown, opts: { client?: typeof site; auth?: string | null; type?: string; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    const client = opts.client ?? site;
    const headers: Record<string, string> = { 'content-type': opts.type ?? 'application/json', ...opts.headers };
    const auth = opts.auth === undefined ? basic(client.client_id, client.client_secret!) : opts.auth;
    if (auth !== null) headers.authorization = auth;
    const res = await fetch(`${h.issuer}/api/notify`, { method: 'POST', headers, body: opts.raw ?? JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
  }

  /** Signs the person in to the site through the real flow; returns the `sub` the site got. */
  async function connect(email: string, client = site): Promise<string> {
    const config = await discover(h, client);
    const { tokens } = await signIn(h, config, new Agent(), email);
    return tokens.claims()!.sub;
  }

  const message = (sub: string, extra: Record<string, unknown> = {}) => ({ sub, category: 'transactional', title: 'Your order', body: 'It ships today.', ...extra });
  /** A header as the letter carries it (mailparser restructures List-* headers). */
  const rawHeader = (letter: ParsedMail, name: string) => {
    const line = letter.headerLines.find((l) => l.key === name)?.line;
    return line?.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  };
  const accountId = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;
  /** Notification letters (not sign-in codes) to an address. */
  const isNotificationTo = (email: string) => (l: ParsedMail) => JSON.stringify(l.to).includes(email) && l.headers.has('x-notification-id');
  const lettersTo = (email: string) => h.smtp.letters.filter(isNotificationTo(email));

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

  describe('who the message is for', () => {
    it('answers 403 not_connected for a subject the site never received', async () => {
      await connect('known@example.com');
      const res = await notify(message('someone-else'));
      expect({ status: res.status, json: res.json }).to.deep.equal({ status: 403, json: { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' } });
      // A subject of another site is no subject of this one: this person signed in to the other site only.
      const subAtOther = await connect('other-only@example.com', other);
      expect((await notify(message(subAtOther), { client: other })).status, 'known to the other site').to.equal(202);
      expect((await notify(message(subAtOther))).status).to.equal(403);
      // Nor is another site's pairwise subject of a person this site does know.
      const pairwiseSub = await connect('known@example.com', pairwise);
      expect(pairwiseSub).to.not.equal(await accountId('known@example.com'));
      expect((await notify(message(pairwiseSub))).status).to.equal(403);
    });

    it('uses the subject from the ID token, pairwise subjects included', async () => {
      const sub = await connect('pw@example.com', pairwise);
      expect(sub).to.not.equal(await accountId('pw@example.com'));
      expect(await notify(message(sub), { client: pairwise })).to.deep.include({ status: 202, json: { inApp: true, email: true, skipped: null } });
      expect((await notify(message(await accountId('pw@example.com')), { client: pairwise })).status).to.equal(403);
    });

    it('answers 403 not_connected once the person blocked the site; a service sign-out does not disconnect it', async () => {
      const sub = await connect('blocked@example.com');
      expect(await h.reference.plugin.blockSite(await accountId('blocked@example.com'), 'n-site')).to.equal('blocked');
      expect((await notify(message(sub))).status).to.equal(403);
      await h.reference.plugin.unblockSite(await accountId('blocked@example.com'), 'n-site');
      expect((await notify(message(sub, { category: 'product' }))).status).to.equal(202);
    });
  });

  describe('the result', () => {
    it('reaches the store in one round trip on a single node, two on a Cluster; the contact only for a letter', async () => {
      const sub = await connect('trips@example.com');
      const { store } = h.reference.plugin;
      // The letter worker shares the store: idle while counting (letters wait in the queue meanwhile).
      await h.reference.plugin.stopLetterWorker();
      try {
        const measure = async (body: unknown) => {
          const before = { commands: store.commandsSent, trips: store.roundTrips };
          const { status } = await notify(body);
          return { status, commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips };
        };
        const cluster = h.redis !== undefined && h.redis.isCluster;
        // In the account only: no letter, so no contact lookup on a single node (a Cluster looks it up beside step 2).
        expect(await measure(message(sub, { category: 'product' }))).to.deep.equal(cluster ? { status: 202, commands: 3, trips: 2 } : { status: 202, commands: 1, trips: 1 });
        // A letter: the reference provider's contact lookup reads the account from the store, after the script on a
        // single node, beside step 2 on a Cluster; then the letter queue's add (BullMQ, not the store's).
        expect(await measure(message(sub))).to.deep.equal(cluster ? { status: 202, commands: 3, trips: 2 } : { status: 202, commands: 2, trips: 2 });
        // A stranger: the site step alone.
        expect(await measure(message('nobody-here'))).to.deep.equal({ status: 403, commands: 1, trips: 1 });
      } finally {
        h.reference.plugin.startLetterWorker();
      }
      await h.smtp.waitFor(isNotificationTo('trips@example.com'));
    });

    it('follows the category defaults: transactional by email, product in the account only, promotions off', async () => {
      const sub = await connect('cat@example.com');
      expect((await notify(message(sub, { title: 'By email' }))).json).to.deep.equal({ inApp: true, email: true, skipped: null });
      expect((await notify(message(sub, { category: 'product', title: 'In the account' }))).json).to.deep.equal({ inApp: true, email: false, skipped: null });
      expect((await notify(message(sub, { category: 'promotions', title: 'Nowhere' }))).json).to.deep.equal({ inApp: false, email: false, skipped: 'category_off' });
      await h.smtp.waitFor(isNotificationTo('cat@example.com'));
      // Only the transactional one was queued and sent; product and promotions never reach the mail server.
      await new Promise((r) => setTimeout(r, 300));
      expect(lettersTo('cat@example.com').map((l) => l.subject)).to.deep.equal(['By email']);
      expect(await h.reference.plugin.letters.pending()).to.equal(0);
      const inbox = await h.reference.plugin.inbox.page(await accountId('cat@example.com'));
      expect(inbox?.items.map((i) => i.title)).to.deep.equal(['In the account', 'By email']);
    });

    it('skips a muted site first, then a category turned off, and says no_email when there is no address', async () => {
      const sub = await connect('prefs@example.com');
      const id = await accountId('prefs@example.com');
      await h.reference.plugin.senders.update(id, 'n-site', { categories: { transactional: 'off', promotions: 'account_and_email' } });
      expect((await notify(message(sub))).json).to.deep.equal({ inApp: false, email: false, skipped: 'category_off' });
      expect((await notify(message(sub, { category: 'promotions' }))).json).to.deep.equal({ inApp: true, email: true, skipped: null });
      await h.reference.plugin.senders.update(id, 'n-site', { muted: true });
      expect((await notify(message(sub, { category: 'promotions' }))).json).to.deep.equal({ inApp: false, email: false, skipped: 'muted' });

      const mute = await connect('nomail@example.com');
      noEmail.add('nomail@example.com');
      expect((await notify(message(mute))).json).to.deep.equal({ inApp: true, email: false, skipped: 'no_email' });
    });

    it('answers the first result again for the same Idempotency-Key and delivers once', async () => {
      const sub = await connect('idem@example.com');
      const headers = { 'idempotency-key': 'order-1234-shipped' };
      const first = await notify(message(sub, { title: 'Idempotent' }), { headers });
      const second = await notify(message(sub, { title: 'Idempotent' }), { headers });
      expect(first).to.deep.include({ status: 202, json: { inApp: true, email: true, skipped: null } });
      expect(second).to.deep.include({ status: 202, json: first.json });
      // The same key from another site is another notification.
      const subOther = await connect('idem@example.com', other);
      expect((await notify(message(subOther, { title: 'Idempotent' }), { client: other, headers })).status).to.equal(202);
      await h.smtp.waitFor((l) => lettersTo('idem@example.com').length >= 2);
      await new Promise((r) => setTimeout(r, 300));
      expect(lettersTo('idem@example.com').filter((l) => l.subject === 'Idempotent')).to.have.length(2);
      const inbox = await h.reference.plugin.store.zentries(`${h.prefix}account:{${await accountId('idem@example.com')}}:inbox`);
      expect(inbox).to.have.length(2);
    });
  });

  describe('rate limits', () => {
    let main: Harness;
    before(async () => {
      main = h;
      h = await startHarness('notify-rate', {
        embedded,
        clients: [burst],
        plugin: { notify: { perClient: { limit: 12, windowSeconds: 60 }, perPerson: { limit: 4, windowSeconds: 60 } } },
      });
    });
    after(async () => {
      await h.close();
      h = main;
    });

    it('limits per (site, person) with 429 and Retry-After', async () => {
      const sub = await connect('rate@example.com', burst);
      for (let i = 0; i < 4; i += 1) expect((await notify(message(sub, { category: 'product' }), { client: burst })).status).to.equal(202);
      const res = await notify(message(sub, { category: 'product' }), { client: burst });
      expect(res.status).to.equal(429);
      expect(res.json).to.deep.equal({ error: 'rate_limited', error_description: 'too many notifications to this person; retry later' });
      // The rest of the 60 s window, in whole seconds (not a fixed second).
      expect(Number(res.headers.get('retry-after'))).to.be.within(55, 60);
    });

    it('limits per site whoever the message is for', async () => {
      const subs = [await connect('rate2@example.com', burst), await connect('rate3@example.com', burst)];
      // 5 requests were counted by the previous test; 12 is the site's limit.
      for (let i = 0; i < 7; i += 1) {
        expect((await notify(message(subs[i % 2]!, { category: 'product' }), { client: burst })).status, `request ${i}`).to.equal(202);
      }
      const res = await notify(message(subs[0]!, { category: 'product' }), { client: burst });
      expect(res.status).to.equal(429);
      expect(res.json).to.deep.equal({ error: 'rate_limited', error_description: 'too many notifications from this site; retry later' });
    });
  });

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

  describe('an Idempotency-Key after its window', () => {
    let main: Harness;
    before(async () => {
      main = h;
      h = await startHarness('notify-idem-window', { embedded, clients: [site], plugin: { letters: { backoffMs: 50 }, notify: { idempotencySeconds: 1 } } });
    });
    after(async () => {
      await h.close();
      h = main;
    });

    it('names a new notification: stored again and sent again, never a 202 that delivers nothing', async () => {
      const sub = await connect('idem-window@example.com');
      const headers = { 'idempotency-key': 'weekly-digest' };
      const first = await notify(message(sub, { title: 'Digest' }), { headers });
      const replay = await notify(message(sub, { title: 'Digest' }), { headers });
      expect([first.status, first.json, replay.json]).to.deep.equal([202, { inApp: true, email: true, skipped: null }, first.json]);
      await h.smtp.waitFor(isNotificationTo('idem-window@example.com'));

      await new Promise((r) => setTimeout(r, 1100));
      const later = await notify(message(sub, { title: 'Digest' }), { headers });
      expect([later.status, later.json]).to.deep.equal([202, { inApp: true, email: true, skipped: null }]);
      await h.smtp.waitFor(() => lettersTo('idem-window@example.com').length >= 2);
      await new Promise((r) => setTimeout(r, 200));
      const ids = lettersTo('idem-window@example.com').map((l) => String(l.headers.get('x-notification-id')));
      expect(ids).to.have.length(2);
      expect(new Set(ids).size).to.equal(2);
      const inbox = await h.reference.plugin.store.zentries(`${h.prefix}account:{${await accountId('idem-window@example.com')}}:inbox`);
      expect(inbox.map(([id]) => id).sort()).to.deep.equal([...ids].sort());
    });
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

export type { oidc };
