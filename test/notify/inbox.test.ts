import { expect } from 'chai';

import { createSignoutNotify, MemoryStore, type SignoutNotify } from '../../src/index.ts';
import { inboxKeys } from '../../src/notify/inbox.ts';
import * as commands from '../../src/store/commands.ts';
import { dropPrefix, redisClient, uniquePrefix } from '../helpers/redis.ts';

const quiet = { info() {}, warn() {}, error() {} };
const contacts = async () => undefined;

for (const kind of ['redis', 'memory'] as const) {
  describe(`plugin.inbox pages (${kind} store)`, () => {
    let plugin: SignoutNotify;
    let done: () => Promise<void>;
    let write: (accountId: string, id: string, receivedAt: number) => Promise<void>;

    before(() => {
      const keyPrefix = uniquePrefix(`inbox-${kind}`);
      const client = kind === 'redis' ? redisClient() : undefined;
      plugin = createSignoutNotify({ redis: client, keyPrefix, contacts, logger: quiet, letters: { worker: false } });
      done = async () => {
        await plugin.close();
        if (client) {
          await dropPrefix(client, keyPrefix);
          await client.quit();
        }
      };
      const { store } = plugin;
      const keys = inboxKeys(store.prefix);
      // Straight into the documented keys: ties of one millisecond, as inboxes written before
      // notify_account kept arrival order hold them.
      write = async (accountId, id, receivedAt) => {
        const entry = JSON.stringify({ id, clientId: 'site', category: 'product', title: id, body: 'b', url: null, receivedAt });
        if (store instanceof MemoryStore) {
          store.kv.zadd(keys.order(accountId), receivedAt, id);
          store.kv.hset(keys.entries(accountId), { [id]: entry });
          return;
        }
        await client!.multi()
          .zadd(keys.order(accountId), receivedAt, id)
          .hset(keys.entries(accountId), id, entry)
          .zadd(keys.unread(accountId), receivedAt, id)
          .pexpire(keys.order(accountId), 60_000).pexpire(keys.entries(accountId), 60_000).pexpire(keys.unread(accountId), 60_000)
          .exec();
      };
    });
    after(() => done());

    it('pages through 75 messages of the same millisecond and 5 newer ones, each exactly once, newest first', async () => {
      const { inbox } = plugin;
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

    it('keeps arrival order for messages that reach /api/notify\'s inbox step in the same millisecond', async () => {
      const { store, sites, senders } = plugin;
      const keys = inboxKeys(store.prefix);
      const at = Date.now();
      await sites.recordSignIn({ accountId: 'same-ms', clientId: 'site', sub: 'sub-1', scopes: ['openid'], sid: 'sid-1', sessionExpiresAt: at + 60_000, at });
      // The route's second step, with one clock reading for all five: ids that sort the other way.
      const ids = ['e', 'd', 'c', 'b', 'a'];
      for (const id of ids) {
        const entry = JSON.stringify({ id, clientId: 'site', category: 'product', title: id, body: 'b', url: null, receivedAt: at });
        const reply = await store.run(
          commands.notifyAccount(),
          [sites.keys.sites('same-ms'), senders.keys.senders('same-ms'), `${store.prefix}rate:{same-ms}`, keys.order('same-ms'), keys.entries('same-ms'), keys.unread('same-ms'), `${store.prefix}account:{same-ms}:ended`],
          ['site', 'product', 'account', id, entry, at, 100, 60_000, 1000, 86_400_000, '0'],
        );
        expect(reply).to.deep.equal(['stored', 'account']);
      }
      const page = (await plugin.inbox.page('same-ms', undefined, 10))!;
      expect(page.items.map((item) => item.id)).to.deep.equal([...ids].reverse());
      expect(page.items.every((item) => item.receivedAt === at)).to.equal(true);
    });

    it('says there is no next page when the last page is exactly full', async () => {
      const { inbox } = plugin;
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
