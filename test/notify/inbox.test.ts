import { expect } from 'chai';

import { createInbox, inboxKeys } from '../../src/notify/inbox.ts';
import { MemoryStore, type Store } from '../../src/store/store.ts';
import { STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS) {
  describe(`inbox pages (${kind.name} store)`, () => {
    let store: Store;
    let done: () => Promise<void>;
    let write: (accountId: string, id: string, receivedAt: number) => Promise<void>;

    before(() => {
      const made = kind.make(uniquePrefix(`inbox-${kind.name}`));
      store = made.store;
      done = made.done;
      const keys = inboxKeys(store.prefix);
      // Straight into the documented keys: many messages in one millisecond is what /api/notify
      // can produce under load but not on demand.
      write = async (accountId, id, receivedAt) => {
        const entry = JSON.stringify({ id, clientId: 'site', category: 'product', title: id, body: 'b', url: null, receivedAt });
        if (store instanceof MemoryStore) {
          store.kv.zadd(keys.order(accountId), receivedAt, id);
          store.kv.hset(keys.entries(accountId), { [id]: entry });
          return;
        }
        await made.client!.multi()
          .zadd(keys.order(accountId), receivedAt, id)
          .hset(keys.entries(accountId), id, entry)
          .zadd(keys.unread(accountId), receivedAt, id)
          .pexpire(keys.order(accountId), 60_000).pexpire(keys.entries(accountId), 60_000).pexpire(keys.unread(accountId), 60_000)
          .exec();
      };
    });
    after(() => done());

    it('pages through 75 messages of the same millisecond and 5 newer ones, each exactly once, newest first', async () => {
      const inbox = createInbox(store, { maxAgeMs: 24 * 60 * 60 * 1000 });
      const at = Date.now() - 60_000;
      const ids: string[] = [];
      for (let i = 0; i < 75; i += 1) {
        ids.push(`tie-${String(i).padStart(3, '0')}`);
        await write('many-ties', ids.at(-1)!, at);
      }
      for (let i = 1; i <= 5; i += 1) {
        ids.push(`new-${i}`);
        await write('many-ties', `new-${i}`, at + i);
      }
      // Newest first; ties in descending id order (Redis' order among equal scores, reversed).
      const expected = [...ids.slice(75).reverse(), ...ids.slice(0, 75).reverse()];

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = (await inbox.page('many-ties', cursor, 10))!;
        seen.push(...page.items.map((item) => item.id));
        if (!page.next) break;
        cursor = page.next;
      }
      expect(seen).to.deep.equal(expected);
    });

    it('says there is no next page when the last page is exactly full', async () => {
      const inbox = createInbox(store, { maxAgeMs: 24 * 60 * 60 * 1000 });
      const at = Date.now() - 60_000;
      for (let i = 0; i < 20; i += 1) await write('exact', `m-${String(i).padStart(2, '0')}`, at + i);
      const first = (await inbox.page('exact', undefined, 10))!;
      expect(first.items.map((item) => item.id)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `m-${String(19 - i).padStart(2, '0')}`));
      expect(first.next).to.be.a('string');
      const second = (await inbox.page('exact', first.next!, 10))!;
      expect(second.items).to.have.length(10);
      expect(second.next).to.equal(null);
    });
  });
}
