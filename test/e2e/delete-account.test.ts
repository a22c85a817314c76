/**
 * Deleting a person (plugin.deleteAccount, the reference provider's deleteAccount):
 * every site with a grant gets its logout token, a letter queued for the
 * person is never sent, and afterwards no key under the prefix names the
 * account id or any of its subjects (pairwise included), in its name or its
 * value. On Redis (the Cluster in the Cluster pass) and on the embedded store.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { BACKCHANNEL_LOGOUT_EVENT, type BackchannelLogoutEvent } from '../../src/events.ts';
import { Agent } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { keysNaming } from '../helpers/keys-naming.ts';
import { until } from '../helpers/poll.ts';
import { discover, lettersSettled, notifyAs, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

for (const embedded of [false, true]) {
  describe(`plugin.deleteAccount (${embedded ? 'embedded store' : 'Redis'})`, () => {
    let h: Harness;
    let receiver: BackchannelReceiver;
    // A site whose back-channel endpoint is down at first: its logout waits in the queue.
    let flaky: BackchannelReceiver;
    const flakySite = siteClient('del-flaky', {});
    let fl: oidc.Configuration;
    const siteA = siteClient('del-a', {});
    const pairwise = siteClient('del-pw', { subject_type: 'pairwise', client_uri: 'https://pw.example' });
    let a: oidc.Configuration;
    let pw: oidc.Configuration;
    const events: BackchannelLogoutEvent[] = [];

    before(async () => {
      receiver = await startReceiver();
      flaky = await startReceiver({ statuses: (n) => (n < 1 ? 503 : 200) });
      flakySite.backchannel_logout_uri = flaky.url;
      siteA.backchannel_logout_uri = receiver.url;
      siteA.backchannel_logout_session_required = true;
      pairwise.backchannel_logout_uri = receiver.url;
      h = await startHarness(`delete-account-${embedded ? 'mem' : 'redis'}`, {
        embedded,
        clients: [siteA, pairwise, flakySite],
        plugin: { backchannelLogout: { attempts: 3, backoffMs: 250, giveUpAfterMs: 60_000 } },
        allowPrivateFetchHosts: ['127.0.0.1'],
        loginCodeLimits: { ...defaultLoginCodeLimits, perIp: { limit: 200, windowMs: 15 * 60_000 } },
      });
      h.reference.plugin.on(BACKCHANNEL_LOGOUT_EVENT, (event) => events.push(event));
      a = await discover(h, siteA);
      pw = await discover(h, pairwise);
      fl = await discover(h, flakySite);
    });
    after(async () => {
      await h?.close();
      await receiver?.close();
      await flaky?.close();
    });

    it('logs the person out of every site, drops their queued letter, and leaves no key naming them or their subjects; a second call changes nothing', async () => {
      const email = `gone-${embedded ? 'm' : 'r'}@example.com`;
      const agent = new Agent();
      const atA = await signIn(h, a, agent, email);
      const atPw = await signIn(h, pw, agent, email);
      const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
      const subA = atA.tokens.claims()!.sub;
      const subPw = atPw.tokens.claims()!.sub;
      expect(subA).to.equal(accountId);
      expect(subPw).to.not.equal(accountId);
      // The person's settings and inbox: a site muted, the console's language, a message.
      expect(await h.reference.plugin.senders.update(accountId, 'del-pw', { muted: true })).to.not.equal(undefined);
      await h.reference.plugin.preferences.setLocale(accountId, 'de');
      // A letter queued while no worker runs.
      await lettersSettled(h);
      await h.reference.plugin.stopLetterWorker();
      const lettersBefore = h.smtp.letters.length;
      const notified = await notifyAs(h, siteA, { sub: subA, category: 'transactional', title: 'Your order', body: 'Shipped.' });
      expect(notified.status).to.equal(202);
      expect(await h.reference.plugin.letters.pending()).to.equal(1);
      expect(await keysNaming(h, [accountId, subPw])).to.not.deep.equal([]);
      const tokensBefore = receiver.tokens.length;

      await h.reference.deleteAccount(accountId);

      // Each site with a grant got its logout token (sid for the site that requires it; the pairwise subject for the other).
      const received = receiver.tokens.slice(tokensBefore);
      expect(received).to.have.length(2);
      const payloads = await Promise.all(received.map(async (token) => {
        const aud = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).aud as string;
        return receiver.verify(token, h.issuer, aud);
      }));
      const byAud = Object.fromEntries(payloads.map((p) => [p.aud as string, p]));
      expect(byAud['del-a']).to.include({ sub: subA, sid: atA.tokens.claims()!.sid });
      expect(byAud['del-pw']).to.include({ sub: subPw });
      // The site's tokens are dead.
      expect(await oauthError(oidc.refreshTokenGrant(a, atA.tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await oauthError(oidc.refreshTokenGrant(pw, atPw.tokens.refresh_token!))).to.equal('invalid_grant');
      // The queued letter is gone: the worker, started again, sends nothing.
      expect(await h.reference.plugin.letters.pending()).to.equal(0);
      h.reference.plugin.startLetterWorker();
      expect(await lettersSettled(h)).to.equal(0);
      expect(h.smtp.letters.slice(lettersBefore).map((l) => l.subject)).to.deep.equal([]);
      // The account-purged cause (its sites and subjects) goes once fanned out by the worker.
      for (let i = 0; i < 100 && (await h.reference.plugin.sharedSignals.pending()) > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(await h.reference.plugin.sharedSignals.pending()).to.equal(0);
      // Nothing under the prefix names the account or its subjects.
      expect(await keysNaming(h, [accountId, subPw])).to.deep.equal([]);
      expect(await h.reference.plugin.connectedSites(accountId)).to.deep.equal([]);
      expect(await h.reference.accounts.findByEmail(email)).to.equal(undefined);

      // Again: nothing left to do, no logout token sent twice.
      await h.reference.plugin.deleteAccount(accountId);
      expect(receiver.tokens.length - tokensBefore).to.equal(2);
      expect(await keysNaming(h, [accountId, subPw])).to.deep.equal([]);
    });

    it('a logout the site did not take at once is still delivered after the deletion, with nothing recorded about the person and no one told; a second call then leaves nothing', async () => {
      const email = `gone-flaky-${embedded ? 'm' : 'r'}@example.com`;
      const agent = new Agent();
      const signedIn = await signIn(h, fl, agent, email);
      const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
      const lettersBefore = h.smtp.letters.length;
      const eventsBefore = events.length;

      await h.reference.deleteAccount(accountId);
      expect(flaky.requests.map((r) => r.status)).to.deep.equal([503]);
      expect(flaky.accepted).to.deep.equal([]);
      // The queue tries again (250 ms later) and the site takes it (waited for, at most 10 s).
      for (let i = 0; i < 200 && flaky.accepted.length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
      const [token] = flaky.accepted;
      expect(await flaky.verify(token!, h.issuer, 'del-flaky')).to.include({ sub: signedIn.tokens.claims()!.sub });
      // Its outcome is told the host as any other's: the first try failed, the queue's (the second) went through.
      await until('the delivery told', () => events.length - eventsBefore >= 2);
      const reason = events[eventsBefore]?.reason;
      expect(reason).to.be.a('string');
      expect(events.slice(eventsBefore)).to.deep.equal([
        { clientId: 'del-flaky', outcome: 'retry', attempt: 1, reason },
        { clientId: 'del-flaky', outcome: 'sent', attempt: 2 },
      ]);
      await lettersSettled(h);
      expect(h.smtp.letters.slice(lettersBefore).map((l) => l.subject)).to.deep.equal([]);
      expect(await h.reference.plugin.inbox.page(accountId)).to.deep.include({ items: [] });

      // No outcome recorded for the person: the finished logout job (kept a day) is all that names them.
      const left = await keysNaming(h, [accountId]);
      expect(left.map((key) => key.slice(h.prefix.length).replace(/:[\w-]+$/, ':<job>'))).to.deep.equal(embedded ? [] : ['{logouts}:logouts:<job>']);
      await h.reference.plugin.deleteAccount(accountId);
      expect(await keysNaming(h, [accountId])).to.deep.equal([]);
    });
  });
}
