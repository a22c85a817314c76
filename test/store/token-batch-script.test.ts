/**
 * token_batch.lua and its embedded twin give the same answers and leave the
 * same data: the consume decides, and nothing is written unless this call
 * consumed the token; nothing is written under a revoked grant; the grant
 * index gets every new record and expires with the last of them, and drops
 * expired members when asked to. (Single node and the embedded store only:
 * on a Cluster the adapter sends one script per hash slot, and this one
 * crosses slots by design.)
 */
import { expect } from 'chai';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import * as commands from '../../src/store/commands.ts';
import type { Store } from '../../src/store/store.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS.filter((k) => k.name !== 'redis cluster')) {
  describe(`token_batch script (${kind.name} store)`, () => {
    let store: Store;
    let done: () => Promise<void>;
    const prefix = uniquePrefix(`token-batch-${kind.name}`);
    const keys = adapterKeys(prefix);
    const old = keys.record('RefreshToken', 'old-rt');
    const grantIndex = keys.grantIndex('g1');
    const tombstone = keys.grantTombstone('g1');
    const fresh = [keys.record('RefreshToken', 'new-rt'), keys.record('AccessToken', 'new-at')];
    const sites = `${prefix}account:{p1}:sites`;

    before(() => {
      const made = kind.make(prefix);
      store = made.store;
      done = made.done;
    });
    after(async () => {
      expect(await keysWithoutTtl(store)).to.deep.equal([]);
      await done();
    });
    beforeEach(async () => {
      await store.del([old, keys.answer(old), keys.unwritten(old), grantIndex, tombstone, ...fresh]);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
    });

    type BatchOptions = { at?: string; keep?: boolean; redo?: boolean; prune?: boolean; now?: number; ttls?: number[]; records?: string[]; usedBy?: string; usedAt?: number };
    const batch = (o: BatchOptions = {}) => {
      const now = o.now ?? Date.now();
      const ttls = o.ttls ?? [60_000, 30_000];
      const argv: (string | number)[] = [o.at ?? '1700000000', o.keep ? '1' : '0', o.keep ? 'sealed-answer' : '', 5000, o.redo ? '1' : '0', now, o.prune ? '1' : '0', o.usedBy ?? '', o.usedAt ?? ''];
      const records = o.records ?? fresh;
      records.forEach((_k, i) => argv.push(`{"n":${i}}`, ttls[i]!));
      return store.run(commands.tokenBatch(), [old, keys.answer(old), grantIndex, tombstone, sites, keys.unwritten(old), ...records], argv);
    };

    it('consumes the token, keeps the answer, writes the new records with their TTL and indexes them; the index expires with the last', async () => {
      const now = Date.now();
      expect(await batch({ keep: true, now })).to.deep.equal([1]);
      expect(await store.hmget(old, ['p', 'c'])).to.deep.equal(['{"grantId":"g1"}', '1700000000']);
      expect(await store.get(keys.answer(old))).to.equal('sealed-answer');
      expect(await store.hgetall(fresh[0]!)).to.deep.equal({ p: '{"n":0}' });
      expect(await store.hgetall(fresh[1]!)).to.deep.equal({ p: '{"n":1}' });
      expect(await store.pttl(fresh[0]!)).to.be.within(59_000, 60_000);
      expect(await store.pttl(fresh[1]!)).to.be.within(29_000, 30_000);
      expect(await store.zentries(grantIndex)).to.deep.equal([[fresh[1], now + 30_000], [fresh[0], now + 60_000]]);
      expect(await store.pttl(grantIndex)).to.be.within(59_000, 60_000);
    });

    it('a token consumed already: its payload and kept answer, and nothing written', async () => {
      expect(await batch({ keep: true })).to.deep.equal([1]);
      await store.del(fresh);
      expect(await batch({ keep: true })).to.deep.equal([0, '{"grantId":"g1"}', 'sealed-answer', null]);
      expect(await batch({ keep: false })).to.deep.equal([0, '{"grantId":"g1"}', null, null]);
      await store.run(commands.putTtl(), [keys.unwritten(old)], [5000, 'at', 1]);
      expect(await batch({ keep: true }), 'with its new tokens recorded as never written').to.deep.equal([0, '{"grantId":"g1"}', 'sealed-answer', 1]);
      for (const key of fresh) expect(await store.hgetall(key)).to.deep.equal({});
    });

    it('a token that is gone: -1, and nothing written (not the token either)', async () => {
      await store.del([old]);
      expect(await batch({ keep: true })).to.deep.equal([-1]);
      for (const key of [old, ...fresh]) expect(await store.hgetall(key)).to.deep.equal({});
      expect(await store.get(keys.answer(old))).to.equal(null);
      expect(await store.zentries(grantIndex)).to.deep.equal([]);
    });

    it('a redo takes the first use\'s place only while its new tokens are recorded as never written and its answer is kept, once', async () => {
      expect(await batch({ keep: true })).to.deep.equal([1]);
      await store.del(fresh);
      expect((await batch({ keep: true, redo: true }) as unknown[])[0], 'not recorded as never written (e.g. revoked): a replay').to.equal(0);
      await store.run(commands.putTtl(), [keys.unwritten(old)], [5000, 'at', 1]);
      expect(await batch({ keep: true, redo: true })).to.deep.equal([1]);
      expect(await store.hgetall(fresh[0]!)).to.deep.equal({ p: '{"n":0}' });
      expect(await store.hgetall(keys.unwritten(old)), 'the record is used up').to.deep.equal({});
      await store.del(fresh);
      expect((await batch({ keep: true, redo: true }) as unknown[])[0], 'a second redo: a replay').to.equal(0);
      await store.run(commands.putTtl(), [keys.unwritten(old)], [5000, 'at', 1]);
      await store.del([keys.answer(old)]);
      expect((await batch({ keep: true, redo: true }) as unknown[])[0], 'no kept answer: a replay').to.equal(0);
      await store.del([keys.unwritten(old)]);
    });

    it('under a revoked grant: consumes, writes no record and no index', async () => {
      await store.run(commands.grantRevoke(), [keys.record('Grant', 'g1'), grantIndex, tombstone], [60_000]);
      expect(await batch()).to.deep.equal([1]);
      expect(await store.hmget(old, ['c'])).to.deep.equal(['1700000000']);
      for (const key of fresh) expect(await store.hgetall(key)).to.deep.equal({});
      expect(await store.zentries(grantIndex)).to.deep.equal([]);
    });

    it('the index expires with its latest member: a later batch of shorter-lived records does not move its expiry earlier', async () => {
      expect(await batch({ ttls: [60_000, 30_000] })).to.deep.equal([1]);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      const shorter = [keys.record('RefreshToken', 'short-rt'), keys.record('AccessToken', 'short-at')];
      expect(await batch({ ttls: [5_000, 2_000], records: shorter })).to.deep.equal([1]);
      expect(await store.pttl(grantIndex)).to.be.within(59_000, 60_000);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      const longer = [keys.record('RefreshToken', 'long-rt'), keys.record('AccessToken', 'long-at')];
      expect(await batch({ ttls: [90_000, 2_000], records: longer })).to.deep.equal([1]);
      expect(await store.pttl(grantIndex)).to.be.within(89_000, 90_000);
      await store.del([...shorter, ...longer]);
    });

    it('drops the index members that expired only when asked to', async () => {
      const stale = [keys.record('RefreshToken', 'stale-rt'), keys.record('AccessToken', 'stale-at')];
      const earlier = Date.now() - 10_000;
      // Written 10 s ago: the stale access token's entry (1 ms) has expired since.
      expect(await batch({ now: earlier, ttls: [60_000, 1], records: stale })).to.deep.equal([1]);
      const again = async (prune: boolean) => {
        await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
        expect(await batch({ prune })).to.deep.equal([1]);
        return (await store.zentries(grantIndex)).map(([m]) => m).sort();
      };
      expect(await again(false), 'not asked: kept').to.deep.equal([...stale, ...fresh].sort());
      expect(await again(true), 'asked: dropped').to.deep.equal([stale[0]!, ...fresh].sort());
      await store.del(stale);
    });

    it('moves the site\'s "last used" first, whatever the writes\' outcome; never creates an entry, never moves it back, leaves an unreadable one alone', async () => {
      const lastUsed = async () => (JSON.parse((await store.hmget(sites, ['site-a']))[0]!) as { lastUsedAt?: number }).lastUsedAt;
      await store.run(commands.hset(), [sites], ['site-a', '{"status":"connected","lastUsedAt":1000}']);
      expect(await batch({ usedBy: 'site-a', usedAt: 2000 })).to.deep.equal([1]);
      expect(await lastUsed(), 'moved').to.equal(2000);
      expect(await batch({ usedBy: 'site-a', usedAt: 3000 }) as unknown[], 'consumed already: refused').to.have.property('0', 0);
      expect(await lastUsed(), 'moved all the same').to.equal(3000);
      await store.del([old]);
      expect(await batch({ usedBy: 'site-a', usedAt: 4000 })).to.deep.equal([-1]);
      expect(await lastUsed(), 'the token gone: moved all the same').to.equal(4000);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      await store.del(fresh);
      expect(await batch({ usedBy: 'site-a', usedAt: 3500 })).to.deep.equal([1]);
      expect(await lastUsed(), 'never backwards').to.equal(4000);
      expect(await store.hgetall(fresh[0]!), 'the writes went through').to.deep.equal({ p: '{"n":0}' });
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      expect(await batch({ usedBy: 'site-b', usedAt: 5000 })).to.deep.equal([1]);
      expect(Object.keys(await store.hgetall(sites)), 'no entry made for a site the person never signed in to').to.deep.equal(['site-a']);
      expect(JSON.parse((await store.hmget(sites, ['site-a']))[0]!)).to.deep.equal({ status: 'connected', lastUsedAt: 4000 });
      await store.run(commands.hset(), [sites], ['site-a', '{not json']);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      expect(await batch({ usedBy: 'site-a', usedAt: 6000 }), 'an unreadable entry does not fail the writes').to.deep.equal([1]);
      expect(await store.hmget(sites, ['site-a'])).to.deep.equal(['{not json']);
      await store.run(commands.upsert(), [old], ['{"grantId":"g1"}', 60_000]);
      expect(await batch({ usedAt: 7000 }), 'none due').to.deep.equal([1]);
      expect(await store.hmget(sites, ['site-a'])).to.deep.equal(['{not json']);
      await store.del([sites]);
    });
  });
}
