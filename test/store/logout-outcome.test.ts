/**
 * The back-channel logout's outcome record (src/store/lua/logout_outcome.lua
 * and its twin) on both stores: the first trigger wins, later outcomes
 * overwrite, every write renews the TTL; and the outcomes as read back.
 */
import { expect } from 'chai';

import { logoutJobId, logoutKeys } from '../../src/notify/backchannel-logout.ts';
import * as commands from '../../src/store/commands.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS) {
  describe(`back-channel logout outcomes (${kind.name} store)`, () => {
    let made: ReturnType<typeof kind.make>;
    beforeEach(() => { made = kind.make(uniquePrefix(`logouts-${kind.name}`)); });
    afterEach(() => made.done());

    it('writes the first pending only once, then the outcome; every key has a TTL', async () => {
      const key = logoutKeys(made.store.prefix).account('acct-1');
      const id = logoutJobId('acct-1', 'site-a', 'sid-1', 'end:uid-1');
      const run = (state: string, onlyNew: string, ttl = 60_000) => made.store.run(commands.logoutOutcome(), [key], [id, JSON.stringify({ clientId: 'site-a', state, at: 1 }), ttl, onlyNew, 1]);
      expect(await run('pending', '1')).to.equal(1);
      expect(await run('pending', '1'), 'a repeated trigger').to.equal(0);
      expect(await run('signed_out', '0')).to.equal(1);
      expect(await made.store.hgetall(key)).to.deep.equal({ [id]: JSON.stringify({ clientId: 'site-a', state: 'signed_out', at: 1 }) });
      await run('signed_out', '0', 120_000);
      expect(await made.store.pttl(key)).to.be.within(60_001, 120_000);
      expect(await keysWithoutTtl(made.store)).to.deep.equal([]);
    });

    it('a new logout drops the outcomes older than the TTL, so a hash renewed again and again keeps one TTL\'s worth', async () => {
      const key = logoutKeys(made.store.prefix).account('acct-2');
      const put = (field: string, at: number, now: number, onlyNew = '1') =>
        made.store.run(commands.logoutOutcome(), [key], [field, JSON.stringify({ clientId: 'site-a', state: 'pending', at }), 60_000, onlyNew, now]);
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
