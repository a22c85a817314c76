/**
 * The session expiry scripts (docs/session-expiry.md) and their embedded
 * twins give the same answers: a site sign-in records the session's sites
 * and the person's due time; a claim and a take hand each due person and
 * session to one sweeper until its lease ends; a session put back is due at
 * its later expiry; the index keeps the earlier of a sweeper's next time and
 * a sign-in's; a sign-out forgets what it told. Every key has a TTL. On the
 * single node and the embedded store, and in the Cluster pass on the Cluster.
 */
import { expect } from 'chai';

import { createConnectedSites } from '../../src/sites/connected-sites.ts';
import * as commands from '../../src/store/commands.ts';
import { EXPIRY_GRACE_MS, expiryKeys } from '../../src/store/expiry-keys.ts';
import type { Store } from '../../src/store/store.ts';
import { bracket, clockOf, type Clock } from '../helpers/clock.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

const LEASE = 60_000;

for (const kind of STORE_KINDS) {
  describe(`session expiry scripts (${kind.name} store)`, () => {
    let store: Store;
    let done: () => Promise<void>;
    let clock: Clock;
    const prefix = uniquePrefix(`expiry-${kind.name}`);
    const keys = expiryKeys(prefix);

    before(() => {
      const made = kind.make(prefix);
      ({ store, done } = made);
      clock = clockOf(made.client);
    });
    after(async () => {
      expect(await keysWithoutTtl(store, [/:account:\{[^}]+\}:sites$/, /:site:\{[^}]+\}:subjects$/])).to.deep.equal([]);
      await done();
    });

    const signIn = (accountId: string, clientId: string, uid: string, sid: string, exp: number) =>
      createConnectedSites(store).recordSignIn({ accountId, clientId, sub: `${accountId}-sub`, scopes: ['openid'], sid, sessionUid: uid, sessionExpiresAt: exp });
    const entries = async (accountId: string) => Object.fromEntries(Object.entries(await store.hgetall(keys.sessions(accountId))).map(([uid, json]) => [uid, JSON.parse(json) as unknown]));
    const dueOf = async (accountId: string) => (await store.zentries(keys.people)).find(([member]) => member === accountId)?.[1];
    const claim = (now: number) => store.run(commands.expiryClaim(), [keys.people], [now, LEASE, 100]) as Promise<string[]>;
    const take = (accountId: string, now: number) => store.run(commands.expiryTake(), [keys.sessions(accountId)], [now, LEASE]) as Promise<string[]>;
    const settle = (accountId: string, uid: string, later: number | '') => store.run(commands.expirySettle(), [keys.sessions(accountId)], [uid, later, EXPIRY_GRACE_MS]) as Promise<string>;
    const index = (accountId: string, due: number | '', claimed: string) => store.run(commands.expiryIndex(), [keys.people], [accountId, due, claimed, EXPIRY_GRACE_MS]);

    it('a site sign-in records the session\'s sites and the person\'s earliest due time', async () => {
      const t = Date.now() + 600_000;
      await signIn('rec', 'site-a', 'uid-1', 'sid-a', t + 5000);
      await signIn('rec', 'site-b', 'uid-1', 'sid-b', t + 9000);
      await signIn('rec', 'site-a', 'uid-2', 'sid-a2', t + 7000);
      expect(await entries('rec')).to.deep.equal({
        'uid-1': { exp: t + 9000, sites: { 'site-a': 'sid-a', 'site-b': 'sid-b' } },
        'uid-2': { exp: t + 7000, sites: { 'site-a': 'sid-a2' } },
      });
      // Lowered only: the earliest sign-in's expiry stays (the sweep puts the person forward when it finds nothing due).
      expect(await dueOf('rec')).to.equal(t + 5000);
      // Expires at the latest session's expiry plus the grace, by the store's clock (Redis TIME on Redis), read around the PTTL.
      const pttl = await bracket(clock, () => store.pttl(keys.sessions('rec')));
      expect(pttl.value).to.be.within(t + 9000 + EXPIRY_GRACE_MS - pttl.after, t + 9000 + EXPIRY_GRACE_MS - pttl.before);
      // A sign-in without a sid or a session records nothing for expiry.
      await createConnectedSites(store).recordSignIn({ accountId: 'none', clientId: 'site-a', sub: 's', scopes: [], sessionExpiresAt: t });
      expect(await entries('none')).to.deep.equal({});
      expect(await dueOf('none')).to.equal(undefined);
    });

    it('a due person and session go to one sweeper until the lease ends; a session put back is due at its later expiry', async () => {
      const t = Date.now() + 600_000;
      await signIn('due', 'site-a', 'u-due', 'sid-1', t);
      await signIn('due', 'site-a', 'u-later', 'sid-2', t + 100_000);
      expect(await claim(t - 1)).to.not.include('due');
      const claimed = await claim(t);
      expect(claimed).to.include('due');
      expect(claimed[0]).to.equal(String(t + LEASE));
      // A second sweeper at the same time gets nothing of it.
      expect(await claim(t)).to.not.include('due');

      const [next, uid, json, ...more] = await take('due', t);
      expect([next, uid, JSON.parse(json!), more]).to.deep.equal([String(t + LEASE), 'u-due', { exp: t, sites: { 'site-a': 'sid-1' } }, []]);
      expect(await take('due', t)).to.deep.equal([String(t + LEASE)]);
      // After the lease (its sweeper died): taken again.
      expect((await take('due', t + LEASE + 1)).slice(1, 2)).to.deep.equal(['u-due']);
      // Alive after all: put back with its later expiry; the next due is the earlier of the two sessions.
      expect(await settle('due', 'u-due', t + 200_000)).to.equal(String(t + 100_000));
      expect(await take('due', t + LEASE + 2)).to.deep.equal([String(t + 100_000)]);
      // Told: forgotten.
      expect(await settle('due', 'u-later', '')).to.equal(String(t + 200_000));
      expect(Object.keys(await entries('due'))).to.deep.equal(['u-due']);
    });

    it('the index: the sweeper\'s next time when untouched since its claim, the earlier one when a sign-in lowered it, gone when nothing is left', async () => {
      const t = Date.now() + 600_000;
      await index('idx', t, '');
      const [leased] = await claim(t);
      await index('idx', t + 50_000, leased!);
      expect(await dueOf('idx')).to.equal(t + 50_000);

      const [again] = await claim(t + 50_000);
      // A sign-in during the sweep: its expiry is earlier than what the sweeper found.
      await index('idx', t + 60_000, '');
      await index('idx', t + 90_000, again!);
      expect(await dueOf('idx')).to.equal(t + 60_000);

      const [last] = await claim(t + 60_000);
      await index('idx', '', last!);
      expect(await dueOf('idx')).to.equal(undefined);
    });

    it('a sign-out forgets what it told: a session, a site of it, a site everywhere, every session but one', async () => {
      const t = Date.now() + 600_000;
      const forget = (uid: string, clientId: string, keep: string) => store.run(commands.expiryForget(), [keys.sessions('out')], [uid, clientId, keep]);
      await signIn('out', 'a', 'u1', 's1a', t);
      await signIn('out', 'b', 'u1', 's1b', t);
      await signIn('out', 'a', 'u2', 's2a', t);
      await signIn('out', 'a', 'u3', 's3a', t);
      await signIn('out', 'b', 'u4', 's4b', t);
      expect(await forget('u1', 'b', '')).to.equal(1);
      expect(await forget('u1', 'b', '')).to.equal(0);
      expect(await forget('u2', '', '')).to.equal(1);
      expect(await forget('', 'a', '')).to.equal(2);
      expect(await entries('out')).to.deep.equal({ 'u4': { exp: t, sites: { b: 's4b' } } });
      await signIn('out', 'a', 'u5', 's5a', t);
      expect(await forget('', '', 'u5')).to.equal(1);
      expect(Object.keys(await entries('out'))).to.deep.equal(['u5']);
    });
  });
}
