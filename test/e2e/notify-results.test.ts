/**
 * POST /api/notify: whom a message may reach (the site's own subjects only), and what
 * it does: the store's round trips, categories, mute, no address, Idempotency-Key.
 */
import { expect } from 'chai';

import { notifyCalls, other, pairwise, startNotifyHarness } from '../helpers/notify.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

// On Redis (a Cluster in the Cluster pass: two scripts) and on the embedded
// store (one script, like a single Redis node): each runs its own path.
for (const embedded of [false, true]) describe(`POST /api/notify (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;
  const noEmail = new Set<string>();

  setUp(() => startNotifyHarness(embedded, noEmail), (started) => { h = started; });
  const { notify, connect, message, accountId, isNotificationTo, lettersTo } = notifyCalls(() => h);

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
      // A Cluster node that has not run a script yet answers NOSCRIPT and gets its body once (one more command, no
      // more round trips): the person's slot may sit on a node no earlier test reached, so one notification first.
      expect((await notify(message(sub, { category: 'product', title: 'First' }))).status).to.equal(202);
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
      // Two notifications, and the security notice of the second sign-in (another browser: connect() uses a new one).
      const entries = await h.reference.plugin.store.hgetall(`${h.prefix}account:{${await accountId('idem@example.com')}}:inbox:entries`);
      const kinds = Object.values(entries).map((raw) => (JSON.parse(raw) as { title: string; notice?: string })).map((e) => e.notice ?? e.title);
      expect(kinds.sort()).to.deep.equal(['Idempotent', 'Idempotent', 'new_browser']);
    });
  });
});
