/**
 * POST /api/notify: its rate limits (per site and person, per site) and an Idempotency-Key
 * whose window has passed; each on a service of its own with those settings.
 */
import { expect } from 'chai';

import { burst, notifyCalls, site } from '../helpers/notify.ts';
import { startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

// On Redis (a Cluster in the Cluster pass: two scripts) and on the embedded
// store (one script, like a single Redis node): each runs its own path.
for (const embedded of [false, true]) describe(`POST /api/notify (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;

  const { notify, connect, message, accountId, isNotificationTo, lettersTo } = notifyCalls(() => h);

  describe('rate limits', () => {
    setUp(() => startHarness('notify-rate', {
      embedded,
      clients: [burst],
      plugin: { notify: { perClient: { limit: 12, windowSeconds: 60 }, perPerson: { limit: 4, windowSeconds: 60 } } },
    }), (started) => { h = started; });

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

  describe('an Idempotency-Key after its window', () => {
    setUp(() => startHarness('notify-idem-window', { embedded, clients: [site], plugin: { letters: { backoffMs: 50 }, notify: { idempotencySeconds: 1 } } }), (started) => { h = started; });

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
});
