/**
 * The back-channel logout's outcome record (src/notify/lua/logout_outcome.lua
 * and its twin) on both stores: the first trigger wins, later outcomes
 * overwrite, every write renews the TTL; the record is capped and a write
 * never reads it whole (its index beside it); a record from before the
 * index is indexed once; and the outcomes as read back.
 */
import { expect } from 'chai';

import { logoutJobId, logoutKeys, OUTCOMES_CAP } from '../../src/notify/backchannel-logout.ts';
import * as commands from '../../src/notify/scripts.ts';
import { hset } from '../../src/store/commands.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS) {
  describe(`back-channel logout outcomes (${kind.name} store)`, () => {
    let made: ReturnType<typeof kind.make>;
    beforeEach(() => { made = kind.make(uniquePrefix(`logouts-${kind.name}`)); });
    afterEach(() => made.done());

    it('writes the first pending only once, then the outcome; every key has a TTL', async () => {
      const key = logoutKeys(made.store.prefix).account('acct-1');
      const id = logoutJobId('acct-1', 'site-a', 'sid-1', 'end:uid-1');
      const keys = logoutKeys(made.store.prefix);
      const run = (state: string, onlyNew: string, ttl = 60_000) => made.store.run(commands.logoutOutcome(), [key, keys.index(key)], [id, JSON.stringify({ clientId: 'site-a', state, at: 1 }), ttl, onlyNew, 1, OUTCOMES_CAP]);
      expect(await run('pending', '1')).to.equal(1);
      expect(await run('pending', '1'), 'a repeated trigger').to.equal(0);
      expect(await run('signed_out', '0')).to.equal(1);
      expect(await made.store.hgetall(key)).to.deep.equal({ [id]: JSON.stringify({ clientId: 'site-a', state: 'signed_out', at: 1 }) });
      await run('signed_out', '0', 120_000);
      expect(await made.store.pttl(key)).to.be.within(60_001, 120_000);
      expect(await made.store.pttl(keys.index(key))).to.be.within(60_001, 120_000);
      expect(await keysWithoutTtl(made.store)).to.deep.equal([]);
    });

    it('a new logout drops the outcomes older than the TTL, so a hash renewed again and again keeps one TTL\'s worth', async () => {
      const key = logoutKeys(made.store.prefix).account('acct-2');
      const put = (field: string, at: number, now: number, onlyNew = '1') =>
        made.store.run(commands.logoutOutcome(), [key, logoutKeys(made.store.prefix).index(key)], [field, JSON.stringify({ clientId: 'site-a', state: 'pending', at }), 60_000, onlyNew, now, OUTCOMES_CAP]);
      // A TTL of a minute; `now` as the script is told it.
      await put('old', 1_000, 1_000);
      await put('newer', 50_000, 50_000);
      expect(Object.keys(await made.store.hgetall(key)).sort()).to.deep.equal(['newer', 'old']);
      // An outcome written again (not new) drops nothing.
      await put('newer', 50_000, 70_000, '0');
      expect(Object.keys(await made.store.hgetall(key)).sort()).to.deep.equal(['newer', 'old']);
      await put('newest', 70_000, 70_000);
      expect(Object.keys(await made.store.hgetall(key)).sort()).to.deep.equal(['newer', 'newest']);
    });

    it('keeps at most the cap, the oldest dropped first, each write a bounded number of steps', async () => {
      const keys = logoutKeys(made.store.prefix);
      const key = keys.account('acct-3');
      const put = (field: string, now: number, cap = 3) =>
        made.store.run(commands.logoutOutcome(), [key, keys.index(key)], [field, JSON.stringify({ clientId: 'site-a', state: 'pending', at: now }), 60_000, '1', now, cap]);
      for (let i = 1; i <= 5; i += 1) await put(`l${i}`, 1000 + i);
      expect(Object.keys(await made.store.hgetall(key)).sort()).to.deep.equal(['l3', 'l4', 'l5']);
      // A hash that grew for a week without a cap is no longer read whole on each write: the index beside it orders the drops.
      if (made.client) {
        const big = keys.account('acct-4');
        await made.client.hset(big, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`old${i}`, JSON.stringify({ clientId: 'site-a', state: 'signed_out', at: 5000 + i })])));
        const run = (field: string, now: number) => made.store.run(commands.logoutOutcome(), [big, keys.index(big)], [field, JSON.stringify({ clientId: 'site-a', state: 'pending', at: now }), 60_000, '1', now, OUTCOMES_CAP]);
        // The first write indexes it once and drops it to the cap, oldest first.
        await run('first', 10_000);
        expect(await made.client.hlen(big)).to.equal(OUTCOMES_CAP);
        expect(await made.client.hexists(big, 'old1999')).to.equal(1);
        expect(await made.client.hexists(big, 'old1900')).to.equal(0);
        // Later writes: one in, one out.
        await run('second', 10_001);
        expect([await made.client.hlen(big), await made.client.hexists(big, 'old1901'), await made.client.hexists(big, 'second')]).to.deep.equal([OUTCOMES_CAP, 0, 1]);
      }
    });

    it('a record from before the index: indexed at its first new outcome, those past the TTL and unreadable ones dropped', async () => {
      const keys = logoutKeys(made.store.prefix);
      const key = keys.account('acct-5');
      // As the script before the index left it: a hash alone.
      await made.store.run(hset(), [key], ['kept', JSON.stringify({ clientId: 'site-a', state: 'signed_out', at: 50_000 }), 'stale', JSON.stringify({ clientId: 'site-a', state: 'signed_out', at: 1_000 }), 'odd', 'not json']);
      await made.store.run(commands.logoutOutcome(), [key, keys.index(key)], ['new', JSON.stringify({ clientId: 'site-a', state: 'pending', at: 70_000 }), 60_000, '1', 70_000, OUTCOMES_CAP]);
      expect(Object.keys(await made.store.hgetall(key)).sort()).to.deep.equal(['kept', 'new']);
      expect(await keysWithoutTtl(made.store)).to.deep.equal([]);
    });
  });
}

describe('back-channel logout ids', () => {
  it('names a logout by site, session, person and cause, never anything else', () => {
    const id = logoutJobId('acct-1', 'site-a', 'sid-1', 'end:uid-1');
    expect(id).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(logoutJobId('acct-1', 'site-a', 'sid-1', 'end:uid-1')).to.equal(id);
    for (const other of [
      logoutJobId('acct-2', 'site-a', 'sid-1', 'end:uid-1'), logoutJobId('acct-1', 'site-b', 'sid-1', 'end:uid-1'),
      logoutJobId('acct-1', 'site-a', undefined, 'end:uid-1'), logoutJobId('acct-1', 'site-a', 'sid-1', 'end:uid-2'),
    ]) expect(other).to.not.equal(id);
  });
});
