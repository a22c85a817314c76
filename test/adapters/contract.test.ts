import { expect } from 'chai';
import calculateSlot from 'cluster-key-slot';
import { errors } from 'oidc-provider';

import { adapterKeys, createStoreAdapter, type StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Script } from '../../src/store/scripts.ts';
import type { Store } from '../../src/store/store.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wraps a store and fails when one script call spans two Cluster hash slots. */
function slotChecked(store: Store, seen: string[][]): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'run') {
        return (script: Script, keys: string[], argv: (string | number)[]) => {
          seen.push(keys);
          const slots = new Set(keys.map((k) => calculateSlot(k)));
          if (slots.size > 1) throw new Error(`${script.name} crosses slots: ${keys.join(', ')}`);
          return target.run(script, keys, argv);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

for (const kind of STORE_KINDS) {
  describe(`adapter contract (${kind.name} store)`, () => {
    let store: Store;
    let adapter: StoreAdapter;
    let done: () => Promise<void>;
    let replays: unknown[];
    const scriptKeys: string[][] = [];
    const prefix = uniquePrefix(`contract-${kind.name}`);
    const keys = adapterKeys(prefix);
    const model = (name: string) => adapter.factory(name);

    before(() => {
      const made = kind.make(prefix);
      store = slotChecked(made.store, scriptKeys);
      done = made.done;
      replays = [];
      adapter = createStoreAdapter(store, { clockTolerance: 0, onReplay: (e) => replays.push(e) });
    });
    after(async () => {
      expect(await keysWithoutTtl(store)).to.deep.equal([]);
      await done();
    });

    it('stores and finds every model, with a TTL from expiresIn', async () => {
      const models = ['Session', 'AccessToken', 'AuthorizationCode', 'RefreshToken', 'Grant', 'Interaction',
        'ReplayDetection', 'PushedAuthorizationRequest', 'ClientCredentials', 'Client', 'InitialAccessToken',
        'RegistrationAccessToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];
      for (const name of models) {
        const payload = { jti: `id-${name}`, kind: name, iat: now(), exp: now() + 60, uid: `uid-${name}`, clientId: 'c1', accountId: 'a1', grantId: 'g-every' };
        await model(name).upsert(`id-${name}`, payload, 60);
        expect(await model(name).find(`id-${name}`), name).to.deep.equal(payload);
        const ttl = await store.pttl(keys.record(name, `id-${name}`));
        expect(ttl, name).to.be.within(58_000, 60_000);
      }
      expect(await model('AccessToken').find('missing')).to.equal(undefined);
    });

    it('without options: keeps a record 15 s past its expiresIn (clockTolerance) and 14 days without one (defaultTtl)', async () => {
      const a = createStoreAdapter(store);
      await a.factory('AccessToken').upsert('tolerant', { jti: 'tolerant' } as never, 60);
      expect(await store.pttl(keys.record('AccessToken', 'tolerant'))).to.be.within(74_000, 75_000);
      await a.factory('Client').upsert('forever-ish', { client_id: 'forever-ish' } as never, undefined as never);
      expect(await store.pttl(keys.record('Client', 'forever-ish'))).to.be.within(14 * 86_400_000 + 14_000, 14 * 86_400_000 + 15_000);
      await a.factory('AccessToken').destroy('tolerant');
      await a.factory('Client').destroy('forever-ish');
    });

    it('falls back to defaultTtl when a model is saved without expiresIn', async () => {
      const a = createStoreAdapter(store, { defaultTtl: 3600, clockTolerance: 0 });
      await a.factory('Client').upsert('dyn', { client_id: 'dyn' } as never, undefined as never);
      expect(await store.pttl(keys.record('Client', 'dyn'))).to.be.within(3_590_000, 3_600_000);
    });

    it('finds a session by uid and forgets the uid when the session is destroyed', async () => {
      const payload = { jti: 's1', kind: 'Session', uid: 'u1', exp: now() + 60, accountId: 'a1' };
      await model('Session').upsert('s1', payload, 60);
      expect(await model('Session').findByUid('u1')).to.deep.equal(payload);
      await model('Session').destroy('s1');
      expect(await model('Session').find('s1')).to.equal(undefined);
      expect(await model('Session').findByUid('u1')).to.equal(undefined);
    });

    it('finds a device code by user code', async () => {
      const payload = { jti: 'd1', kind: 'DeviceCode', userCode: 'ABCD-EFGH', exp: now() + 60, clientId: 'c1' };
      await model('DeviceCode').upsert('d1', payload, 60);
      expect(await model('DeviceCode').findByUserCode('ABCD-EFGH')).to.deep.equal(payload);
      expect(await model('DeviceCode').findByUserCode('NOPE-NOPE')).to.equal(undefined);
    });

    it('consumes once; a second consume revokes the grant and fails with invalid_grant', async () => {
      await model('Grant').upsert('g1', { jti: 'g1', kind: 'Grant', accountId: 'a1', clientId: 'c1', exp: now() + 60 }, 60);
      await model('RefreshToken').upsert('rt1', { jti: 'rt1', grantId: 'g1', clientId: 'c1', accountId: 'a1' }, 60);
      await model('AccessToken').upsert('at1', { jti: 'at1', grantId: 'g1', clientId: 'c1', accountId: 'a1' }, 60);
      await model('RefreshToken').consume('rt1');
      const consumed = await model('RefreshToken').find('rt1');
      expect(consumed?.consumed).to.be.a('number');
      const err = await model('RefreshToken').consume('rt1').then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(errors.InvalidGrant);
      expect((err as errors.InvalidGrant).error).to.equal('invalid_grant');
      expect(await model('Grant').find('g1')).to.equal(undefined);
      expect(await model('AccessToken').find('at1')).to.equal(undefined);
      expect(await model('RefreshToken').find('rt1')).to.equal(undefined);
      expect(replays).to.deep.include({ model: 'RefreshToken', grantId: 'g1', clientId: 'c1', accountId: 'a1' });
    });

    it('replaces a record whole when it is saved again: a consumed one is no longer consumed', async () => {
      await model('AuthorizationCode').upsert('again', { jti: 'again', clientId: 'c1', scope: 'openid' }, 60);
      await model('AuthorizationCode').consume('again');
      expect((await model('AuthorizationCode').find('again'))?.consumed).to.be.a('number');
      const payload = { jti: 'again', clientId: 'c1', scope: 'openid email' };
      await model('AuthorizationCode').upsert('again', payload, 30);
      expect(await model('AuthorizationCode').find('again')).to.deep.equal(payload);
      expect(await store.pttl(keys.record('AuthorizationCode', 'again'))).to.be.within(28_000, 30_000);
      await model('AuthorizationCode').destroy('again');
    });

    it('lets exactly one of 20 concurrent consumes win', async () => {
      await model('Grant').upsert('g20', { jti: 'g20', accountId: 'a1', clientId: 'c1' }, 60);
      await model('RefreshToken').upsert('rt20', { jti: 'rt20', grantId: 'g20', clientId: 'c1' }, 60);
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => model('RefreshToken').consume('rt20')));
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      expect(results.filter((r) => r.status === 'rejected')).to.have.length(19);
      expect(await model('Grant').find('g20')).to.equal(undefined);
    });

    it('never recreates a record that consume or destroy raced away (no key without TTL)', async () => {
      for (let i = 0; i < 50; i += 1) {
        await model('AuthorizationCode').upsert(`race${i}`, { jti: `race${i}`, clientId: 'c1' }, 60);
        await Promise.allSettled([
          model('AuthorizationCode').consume(`race${i}`),
          model('AuthorizationCode').destroy(`race${i}`),
          model('AuthorizationCode').consume(`race${i}`),
        ]);
      }
      const err = await model('AuthorizationCode').consume('never-existed').then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(errors.InvalidGrant);
      expect(await model('AuthorizationCode').find('never-existed')).to.equal(undefined);
      expect(await keysWithoutTtl(store)).to.deep.equal([]);
    });

    it('revokeByGrantId removes that model only; destroying the grant removes the rest', async () => {
      await model('Grant').upsert('g2', { jti: 'g2', accountId: 'a1', clientId: 'c1' }, 60);
      await model('AccessToken').upsert('at2', { jti: 'at2', grantId: 'g2' }, 60);
      await model('RefreshToken').upsert('rt2', { jti: 'rt2', grantId: 'g2' }, 60);
      await model('AccessToken').upsert('other', { jti: 'other', grantId: 'g-other' }, 60);
      await model('AccessToken').revokeByGrantId!('g2');
      expect(await model('AccessToken').find('at2')).to.equal(undefined);
      expect(await model('RefreshToken').find('rt2')).to.not.equal(undefined);
      await model('Grant').destroy('g2');
      expect(await model('RefreshToken').find('rt2')).to.equal(undefined);
      expect(await model('Grant').find('g2')).to.equal(undefined);
      expect(await model('AccessToken').find('other')).to.not.equal(undefined);
    });

    it('keeps every credential under a SHA-256 of its value, without the value in what it stores; other models under their id', async () => {
      const credentials = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'ClientCredentials', 'DeviceCode', 'BackchannelAuthenticationRequest',
        'PushedAuthorizationRequest', 'PreAuthorizedCode', 'RegistrationAccessToken', 'InitialAccessToken'];
      for (const name of [...credentials, 'Session', 'Grant', 'Interaction', 'ReplayDetection', 'Client']) {
        const id = `credential-value-${name}`;
        const payload = { jti: id, iat: now(), exp: now() + 60 };
        await model(name).upsert(id, payload, 60);
        const key = keys.record(name, id);
        const [stored] = await store.hmget(key, ['p']);
        expect(stored, name).to.be.a('string');
        if (credentials.includes(name)) {
          expect(key, name).to.not.include(id);
          expect(stored, name).to.not.include(id);
        } else {
          expect(key, name).to.include(id);
        }
        expect(await model(name).find(id), name).to.deep.equal(payload);
      }
    });

    it('lets every model that carries a grant die with it: revokeByGrantId and destroying the grant', async () => {
      for (const name of ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']) {
        const grantId = `g-dies-${name}`;
        await model('Grant').upsert(grantId, { jti: grantId, accountId: 'a1', clientId: 'c1' }, 60);
        await model(name).upsert(`by-grant-${name}`, { jti: `by-grant-${name}`, grantId }, 60);
        await model(name).upsert(`kept-${name}`, { jti: `kept-${name}`, grantId: 'g-kept' }, 60);
        await model(name).revokeByGrantId!(grantId);
        expect(await model(name).find(`by-grant-${name}`), name).to.equal(undefined);
        expect(await model(name).find(`kept-${name}`), name).to.not.equal(undefined);
        await model(name).upsert(`by-destroy-${name}`, { jti: `by-destroy-${name}`, grantId: `${grantId}-2` }, 60);
        await model('Grant').upsert(`${grantId}-2`, { jti: `${grantId}-2`, accountId: 'a1', clientId: 'c1' }, 60);
        await model('Grant').destroy(`${grantId}-2`);
        expect(await model(name).find(`by-destroy-${name}`), name).to.equal(undefined);
      }
    });

    it('refuses writes under a revoked grant (tombstone), interleaved with the revocation', async () => {
      await model('Grant').upsert('g3', { jti: 'g3', accountId: 'a1', clientId: 'c1' }, 60);
      // A flow loaded the grant, then the grant was revoked, then the flow writes.
      await adapter.revokeGrant('g3');
      await model('Grant').upsert('g3', { jti: 'g3', accountId: 'a1', clientId: 'c1' }, 60);
      await model('AccessToken').upsert('late', { jti: 'late', grantId: 'g3' }, 60);
      await model('RefreshToken').upsert('late-rt', { jti: 'late-rt', grantId: 'g3' }, 60);
      expect(await model('Grant').find('g3')).to.equal(undefined);
      expect(await model('AccessToken').find('late')).to.equal(undefined);
      expect(await model('RefreshToken').find('late-rt')).to.equal(undefined);
      // Concurrent: writes and revocation at once, many times; nothing survives.
      for (let i = 0; i < 30; i += 1) {
        const g = `gi${i}`;
        await model('Grant').upsert(g, { jti: g, accountId: 'a1', clientId: 'c1' }, 60);
        await Promise.all([
          model('AccessToken').upsert(`${g}-at`, { jti: `${g}-at`, grantId: g }, 60),
          adapter.revokeGrant(g),
          model('Grant').upsert(g, { jti: g, accountId: 'a1', clientId: 'c1' }, 60),
          model('RefreshToken').upsert(`${g}-rt`, { jti: `${g}-rt`, grantId: g }, 60),
        ]);
        expect(await model('Grant').find(g), g).to.equal(undefined);
      }
    });

    it('prunes expired members from the grant and account indexes', async () => {
      await model('Grant').upsert('g4', { jti: 'g4', accountId: 'a4', clientId: 'c4' }, 60);
      for (let i = 0; i < 5; i += 1) {
        await model('AccessToken').upsert(`short${i}`, { jti: `short${i}`, grantId: 'g4' }, 1);
      }
      await model('Grant').upsert('g4b', { jti: 'g4b', accountId: 'a4', clientId: 'c4' }, 1);
      await sleep(1100);
      await model('AccessToken').upsert('long', { jti: 'long', grantId: 'g4' }, 60);
      await model('Grant').upsert('g4c', { jti: 'g4c', accountId: 'a4', clientId: 'c4' }, 60);
      expect((await store.zentries(keys.grantIndex('g4'))).map(([m]) => m)).to.deep.equal([keys.record('AccessToken', 'long')]);
      expect(await adapter.grantIds('a4', 'c4')).to.have.members(['g4', 'g4c']);
      expect((await store.zentries(keys.accountGrants('a4', 'c4'))).map(([m]) => m)).to.have.members(['g4', 'g4c']);
      const indexTtl = await store.pttl(keys.grantIndex('g4'));
      expect(indexTtl).to.be.within(58_000, 60_000);
    });

    it('revokes every grant of one account at one client', async () => {
      await model('Grant').upsert('g5', { jti: 'g5', accountId: 'a5', clientId: 'c5' }, 60);
      await model('Grant').upsert('g6', { jti: 'g6', accountId: 'a5', clientId: 'c5' }, 60);
      await model('Grant').upsert('g7', { jti: 'g7', accountId: 'a5', clientId: 'other' }, 60);
      await model('RefreshToken').upsert('rt5', { jti: 'rt5', grantId: 'g5' }, 60);
      expect(await adapter.revokeAccountGrants('a5', 'c5')).to.have.members(['g5', 'g6']);
      expect(await model('Grant').find('g5')).to.equal(undefined);
      expect(await model('Grant').find('g6')).to.equal(undefined);
      expect(await model('RefreshToken').find('rt5')).to.equal(undefined);
      expect(await model('Grant').find('g7')).to.not.equal(undefined);
    });

    it('keeps every multi-key script inside one hash slot', () => {
      expect(scriptKeys.some((k) => k.length > 1)).to.equal(true);
    });
  });
}
