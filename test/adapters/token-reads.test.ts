import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';

import { expect } from 'chai';
import Provider from 'oidc-provider';

import { createStoreAdapter, type StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Script } from '../../src/store/scripts.ts';
import type { Store } from '../../src/store/store.ts';
import { STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

const CLIENT = { client_id: 'reads-site', client_secret: 'reads-site-secret-0123456789abcdef', redirect_uris: ['https://site.example/cb'], grant_types: ['authorization_code', 'refresh_token'] };
const BASIC = `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`;

/** The store as the adapter sees it on a Cluster: no script may read a key it was not given. */
function asOnCluster(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'singleNode') return false;
      if (prop === 'run') {
        return (script: Script, keys: string[], argv: (string | number)[]) => {
          // It reads keys it derives from the record: other hash slots on a Cluster.
          if (script.name === 'token_read') throw new Error('token_read run on a Cluster');
          return target.run(script, keys, argv);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const LAYOUTS = [
  { name: 'single node', wrap: (s: Store) => s, introspection: { commands: 1, trips: 1 }, unknown: { commands: 2, trips: 2 } },
  // On a Cluster the second round trip also reads the "ended before" marks of the site and the person (other hash slots).
  { name: 'Cluster', wrap: asOnCluster, introspection: { commands: 5, trips: 2 }, unknown: { commands: 2, trips: 2 } },
];

for (const kind of STORE_KINDS) {
  for (const layout of LAYOUTS) {
    describe(`token, session and grant reads (${kind.name} store, ${layout.name})`, () => {
      let store: Store;
      let adapter: StoreAdapter;
      let provider: Provider;
      let server: Server;
      let base: string;
      let done: () => Promise<void>;

      before(async () => {
        const made = kind.make(uniquePrefix(`reads-${kind.name}`));
        done = made.done;
        store = layout.wrap(made.store);
        adapter = createStoreAdapter(store, { clockTolerance: 0 });
        provider = new Provider('http://127.0.0.1', {
          adapter: adapter.factory,
          clients: [CLIENT],
          features: { introspection: { enabled: true }, revocation: { enabled: true } },
          findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
        });
        server = provider.listen(0, '127.0.0.1') as unknown as Server;
        await new Promise((r) => server.once('listening', r));
        base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
        // Loads the scripts into Redis' cache: on a fresh Redis the first EVALSHA of each answers
        // NOSCRIPT and costs one command more than the counts below.
        await introspect('warm-up-0123456789abcdefghijklmnopqrstuvwxyz');
      });
      after(async () => {
        await new Promise((r) => server.close(r));
        await done();
      });

      /** A sign-in as oidc-provider records it: session, grant, and a session-bound access token. */
      async function signedInToken(accountId: string) {
        const grant = new provider.Grant({ accountId, clientId: CLIENT.client_id });
        grant.addOIDCScope('openid');
        const grantId = await grant.save();
        const SessionModel = provider.Session as unknown as new (payload: object) => InstanceType<typeof provider.Session>;
        const session = new SessionModel({
          accountId,
          loginTs: Math.floor(Date.now() / 1000),
          authorizations: { [CLIENT.client_id]: { sid: randomBytes(8).toString('hex'), grantId } },
        });
        await session.save(3600);
        const client = (await provider.Client.find(CLIENT.client_id))!;
        const token = await new provider.AccessToken({ accountId, client, grantId, sessionUid: session.uid, expiresWithSession: true, scope: 'openid', gty: 'authorization_code' }).save();
        return { token, grantId, session };
      }

      async function introspect(token: string) {
        const before = { commands: store.commandsSent, trips: store.roundTrips };
        const res = await fetch(`${base}/token/introspection`, {
          method: 'POST',
          headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        });
        return { status: res.status, body: await res.json() as Record<string, unknown>, cost: { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips } };
      }

      it(`introspects a session-bound token in ${layout.introspection.trips} round trip(s)`, async () => {
        const { token } = await signedInToken('acct-1');
        const { status, body, cost } = await introspect(token);
        expect(status).to.equal(200);
        expect(body).to.include({ active: true, client_id: CLIENT.client_id, sub: 'acct-1', token_type: 'Bearer' });
        expect(cost).to.deep.equal(layout.introspection);
      });

      it('answers inactive for an unknown token after looking for it as an access token, then as a refresh token', async () => {
        const { status, body, cost } = await introspect('no-such-token-0123456789abcdefghijklmnopq');
        expect({ status, body }).to.deep.equal({ status: 200, body: { active: false } });
        expect(cost).to.deep.equal(layout.unknown);
      });

      it('answers inactive once the grant is revoked', async () => {
        const { token, grantId } = await signedInToken('acct-2');
        expect((await introspect(token)).body.active).to.equal(true);
        await adapter.revokeGrant(grantId);
        expect((await introspect(token)).body).to.deep.equal({ active: false });
      });

      it('answers inactive once the session the token is bound to has ended', async () => {
        const { token, session } = await signedInToken('acct-3');
        expect((await introspect(token)).body.active).to.equal(true);
        await session.destroy();
        expect((await introspect(token)).body).to.deep.equal({ active: false });
      });

      it('answers inactive when the grant was replaced by another for the same session', async () => {
        // The session now points at a newer grant: the old token's binding no longer holds.
        const { token, session } = await signedInToken('acct-4');
        session.authorizations![CLIENT.client_id]!.grantId = 'a-newer-grant';
        await session.save(3600);
        expect((await introspect(token)).body).to.deep.equal({ active: false });
      });
    });
  }
}
