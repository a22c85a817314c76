/**
 * The adoption's two scripts (src/adopt/lua/ and their twins) on every store:
 * the claim moves a record once, remembers it moved (a lagging copy never comes
 * back), and refuses one a tombstone names; a site moved in from a grant widens
 * what Connected sites knows and never changes its status; the import's
 * lease is held by one run at a time, renewed by it, given back by it only.
 */
import { expect } from 'chai';

import { adoptClaim, adoptLease, adoptSite } from '../../src/adopt/scripts.ts';
import * as commands from '../../src/store/commands.ts';
import { STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS) {
  describe(`the adoption's scripts (${kind.name} store)`, () => {
    let made: ReturnType<typeof kind.make>;
    beforeEach(() => { made = kind.make(uniquePrefix(`adopt-scripts-${kind.name.replace(' ', '-')}`)); });
    afterEach(() => made.done());

    it('claims a record once, with its lifetime and marks; later claims say when it moved, even once it is gone', async () => {
      const { store } = made;
      const record = `${store.prefix}RefreshToken:{abc}`;
      const moved = `${record}:moved`;
      const claim = (now: number) => store.run(adoptClaim(), [record, moved, record], ['{"kind":"RefreshToken"}', 60_000, 1700000000, '', now]);
      expect(await claim(1_000)).to.deep.equal([1]);
      expect(await store.hmget(record, ['p', 'c', 't'])).to.deep.equal(['{"kind":"RefreshToken"}', '1700000000', null]);
      expect(await store.pttl(record)).to.be.within(59_000, 60_000);
      expect(await store.pttl(moved)).to.be.within(59_000, 60_000);
      expect(await claim(1_500)).to.deep.equal([0, 500]);
      await store.del([record]);
      expect(await claim(4_000), 'consumed and destroyed here: never again').to.deep.equal([0, 3000]);
      expect(await store.hmget(record, ['p'])).to.deep.equal([null]);
    });

    it('refuses a grant its tombstone names, and one already here, and marks them moved', async () => {
      const { store } = made;
      const grant = `${store.prefix}Grant:{g1}`;
      await store.run(commands.putTtl(), [`${grant}:revoked`], [60_000, 'x', '1']);
      expect(await store.run(adoptClaim(), [grant, `${grant}:moved`, `${grant}:revoked`], ['{}', 60_000, '', 1700000000000, 1])).to.deep.equal([0, -1]);
      expect(await store.hmget(grant, ['p'])).to.deep.equal([null]);
      expect(await store.hmget(`${grant}:moved`, ['at'])).to.deep.equal(['1']);
      const session = `${store.prefix}Session:{s1}`;
      await store.run(commands.upsert(), [session], ['{"native":true}', 60_000]);
      expect(await store.run(adoptClaim(), [session, `${session}:moved`, session], ['{}', 60_000, '', '', 2])).to.deep.equal([0, -1]);
      expect(await store.hmget(session, ['p'])).to.deep.equal(['{"native":true}']);
    });

    it('adds a site with the grant\'s dates, widens them later, and keeps the status the person set', async () => {
      const { store } = made;
      const sites = `${store.prefix}account:{a1}:sites`;
      expect(await store.run(adoptSite(), [sites], ['site-a', 2_000, 'openid'])).to.equal(1);
      expect(JSON.parse((await store.hmget(sites, ['site-a']))[0]!)).to.deep.equal({ firstSignInAt: 2_000, lastSignInAt: 2_000, scopes: 'openid', status: 'connected' });
      await store.run(commands.siteStatus(), [sites], ['site-a', 'blocked', 3_000, '']);
      expect(await store.run(adoptSite(), [sites], ['site-a', 1_000, 'openid email'])).to.equal(0);
      expect(await store.run(adoptSite(), [sites], ['site-a', 5_000, 'openid offline_access'])).to.equal(0);
      expect(JSON.parse((await store.hmget(sites, ['site-a']))[0]!)).to.deep.equal({ firstSignInAt: 1_000, lastSignInAt: 5_000, scopes: 'openid offline_access', status: 'blocked', blockedAt: 3_000 });
    });

    it('holds the import\'s lease for one run: taken and renewed by it, refused to another with how long it still holds, given back by its holder only', async () => {
      const { store } = made;
      const lease = `${store.prefix}{adopt}:import:lease`;
      const call = (holder: string, mode: string, ms = 60_000) => store.run(adoptLease(), [lease], [holder, mode, ms]);
      expect(await call('run-1', 'hold', 30_000)).to.deep.equal([1]);
      expect(await store.pttl(lease)).to.be.within(29_000, 30_000);
      expect(await call('run-1', 'hold')).to.deep.equal([1]);
      expect(await store.pttl(lease)).to.be.within(59_000, 60_000);
      const [held, left] = await call('run-2', 'hold') as [number, number];
      expect([held, left > 59_000 && left <= 60_000]).to.deep.equal([0, true]);
      expect(await call('run-2', 'give')).to.deep.equal([1]);
      expect(await store.get(lease)).to.equal('run-1');
      expect(await call('run-1', 'give')).to.deep.equal([1]);
      expect(await store.get(lease)).to.equal(null);
      expect(await call('run-2', 'hold')).to.deep.equal([1]);
    });
  });
}
