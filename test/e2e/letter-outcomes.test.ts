/**
 * What the letter worker does with each letter, as the host sees it through
 * the plugin's `letter` event and the mail server: a person without an
 * address, a site gone from the configuration, a letter that cannot be
 * written, a letter already sent or being sent by another worker, and the
 * service's theft notice. Letters are queued with `plugin.letters.add` (as
 * POST /api/notify and the theft report queue them) on real Redis, and sent
 * by the reference provider's own worker into a real SMTP sink.
 */
import { randomUUID } from 'node:crypto';

import { expect } from 'chai';

import { LETTER_EVENT, type LetterEvent, type LetterJob } from '../../src/index.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('lo-site', { client_name: 'Shop', client_uri: 'https://shop.example' });
const DAY_MS = 24 * 60 * 60_000;

describe('letter outcomes (the letter event and the mail server)', () => {
  let h: Harness;
  const events: LetterEvent[] = [];

  before(async () => {
    h = await startHarness('letter-outcomes', { clients: [site], plugin: { letters: { backoffMs: 60_000, attempts: 3 } } });
    h.reference.plugin.on(LETTER_EVENT, (e) => events.push(e));
  });
  after(() => h.close());

  /** The first event of this letter, waiting for it. */
  async function eventOf(id: string, timeoutMs = 10_000): Promise<LetterEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = events.find((e) => e.notificationId === id);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no letter event for ${id}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const lettersFor = (id: string) => h.smtp.letters.filter((l) => l.headers.get('x-notification-id') === id);

  /** A person connected to `clientId`, with an address or without one. */
  async function person(clientId: string, email?: string): Promise<string> {
    const { plugin, accounts } = h.reference;
    const { accountId } = email ? await accounts.findOrCreate(email) : await accounts.create({});
    await plugin.sites.recordSignIn({ accountId, clientId, sub: accountId, scopes: ['openid'], sessionExpiresAt: Date.now() + DAY_MS });
    return accountId;
  }
  const notification = (accountId: string, clientId = site.client_id, extra: Partial<LetterJob> = {}): LetterJob =>
    ({ id: randomUUID(), accountId, clientId, category: 'transactional', title: 'Your order shipped', body: 'It is on its way.', url: null, ...extra } as LetterJob);
  const keyOf = (id: string, what: 'sent' | 'hold') => `${h.prefix}letter:{${id}}:${what}`;

  it('sends a notification once, and keeps its "sent" marker seven days, longer than any retry', async () => {
    const job = notification(await person(site.client_id, 'lo-sent@example.com'));
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'sent' });
    expect(lettersFor(job.id)).to.have.length(1);
    const ttl = await h.redis!.pttl(keyOf(job.id, 'sent'));
    expect(ttl).to.be.within(7 * DAY_MS - 60_000, 7 * DAY_MS);
  });

  it('skips a notification for a person without an address (no_email), and sends nothing', async () => {
    const job = notification(await person(site.client_id));
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'no_email' });
    expect(lettersFor(job.id)).to.deep.equal([]);
  });

  it('skips a notification the person muted since it was accepted, naming why (muted)', async () => {
    const accountId = await person(site.client_id, 'lo-muted@example.com');
    await h.reference.plugin.senders.update(accountId, site.client_id, { muted: true });
    const job = notification(accountId);
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'muted' });
  });

  it('skips a notification of a site no longer in the configuration (unknown_client)', async () => {
    const job = notification(await person('lo-gone', 'lo-gone@example.com'), 'lo-gone');
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'unknown_client' });
  });

  it('gives up at once on a letter that cannot be written (a link that is no URL): failed, not retried', async () => {
    const job = notification(await person(site.client_id, 'lo-bad@example.com'), site.client_id, { url: 'not a url' });
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({
      notificationId: job.id, outcome: 'failed', reason: 'letter cannot be written: notificationLetter: url is not an absolute URL',
    });
    expect(lettersFor(job.id)).to.deep.equal([]);
  });

  it('does not send again a letter whose "sent" marker exists (its worker died after the mail server took it)', async () => {
    const job = notification(await person(site.client_id, 'lo-again@example.com'));
    await h.redis!.set(keyOf(job.id, 'sent'), '1', 'PX', DAY_MS);
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'already_sent' });
    expect(lettersFor(job.id)).to.deep.equal([]);
  });

  it('leaves a letter another worker holds to that worker: retried later, not sent now', async () => {
    const job = notification(await person(site.client_id, 'lo-held@example.com'));
    await h.redis!.set(keyOf(job.id, 'hold'), 'another-worker', 'PX', 60_000);
    await h.reference.plugin.letters.add(job);
    expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'retry', reason: 'another worker is sending this letter' });
    expect(lettersFor(job.id)).to.deep.equal([]);
  });

  describe('the theft notice', () => {
    const theft = (accountId: string, clientId = site.client_id): LetterJob => ({ kind: 'theft', id: randomUUID(), accountId, clientId, at: Date.now() });

    it('is sent with the way to the person\'s sessions and devices', async () => {
      const job = theft(await person(site.client_id, 'lo-theft@example.com'));
      await h.reference.plugin.letters.add(job);
      expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'sent' });
      const [letter] = lettersFor(job.id);
      expect(letter!.text).to.include(`${h.issuer}/console/sessions`);
      expect(letter!.subject).to.include('Shop');
    });

    it('names a site gone from the configuration by its id', async () => {
      const job = theft(await person('lo-gone-2', 'lo-theft-gone@example.com'), 'lo-gone-2');
      await h.reference.plugin.letters.add(job);
      expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'sent' });
      expect(lettersFor(job.id)[0]!.subject).to.include('lo-gone-2');
    });

    it('is skipped for an account the host no longer knows (no_email)', async () => {
      const job = theft(`gone-${randomUUID()}`);
      await h.reference.plugin.letters.add(job);
      expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'no_email' });
    });

    it('is skipped for a person without an address (no_email)', async () => {
      const job = theft(await person(site.client_id));
      await h.reference.plugin.letters.add(job);
      expect(await eventOf(job.id)).to.deep.equal({ notificationId: job.id, outcome: 'skipped', reason: 'no_email' });
      expect(lettersFor(job.id)).to.deep.equal([]);
    });
  });
});
