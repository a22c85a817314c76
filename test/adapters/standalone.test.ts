/**
 * The adapters a host can use on their own (`oidc-signout-notify/adapters/redis`
 * and `/adapters/memory`), without the plugin: no `onReplay` to call, and
 * the grant index read as a host would read it.
 */
import { expect } from 'chai';
import { errors } from 'oidc-provider';

import { memoryAdapter } from '../../adapters/memory.ts';
import { redisAdapter } from '../../adapters/redis.ts';
import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';

const now = () => Math.floor(Date.now() / 1000);

const KINDS: { name: string; make(): { adapter: StoreAdapter; done(): Promise<void> } }[] = [
  {
    name: 'redisAdapter',
    make() {
      const client = testRedis();
      const keyPrefix = uniquePrefix('standalone');
      return { adapter: redisAdapter(client, { keyPrefix, clockTolerance: 0 }), async done() { await dropPrefix(client, keyPrefix); await client.quit(); } };
    },
  },
  { name: 'memoryAdapter', make: () => ({ adapter: memoryAdapter({ clockTolerance: 0 }), async done() {} }) },
];

for (const kind of KINDS) {
  describe(`${kind.name} on its own`, () => {
    let adapter: StoreAdapter;
    let done: () => Promise<void>;
    before(() => ({ adapter, done } = kind.make()));
    after(() => done());

    it('answers a consumed refresh token presented again with invalid_grant (no onReplay given) and revokes its grant', async () => {
      const model = (name: string) => adapter.factory(name);
      await model('Grant').upsert('sg1', { jti: 'sg1', kind: 'Grant', accountId: 'a', clientId: 'c', exp: now() + 60 }, 60);
      await model('RefreshToken').upsert('srt1', { jti: 'srt1', grantId: 'sg1', clientId: 'c', accountId: 'a' }, 60);
      await model('RefreshToken').consume('srt1');
      const err = await model('RefreshToken').consume('srt1').then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(errors.InvalidGrant);
      expect(await model('Grant').find('sg1')).to.equal(undefined);
    });

    it('lists the live grants of a person at a site, not the expired ones', async () => {
      const grants = adapter.factory('Grant');
      await grants.upsert('short', { jti: 'short', kind: 'Grant', accountId: 'p', clientId: 's', exp: now() + 1 }, 1);
      await grants.upsert('long', { jti: 'long', kind: 'Grant', accountId: 'p', clientId: 's', exp: now() + 60 }, 60);
      expect((await adapter.grantIds('p', 's')).sort()).to.deep.equal(['long', 'short']);
      await new Promise((r) => setTimeout(r, 1100));
      expect(await adapter.grantIds('p', 's')).to.deep.equal(['long']);
    });
  });
}
