/**
 * The reference provider's passkeys and linked accounts on both stores
 * (Redis and the embedded twins of their Lua steps): the same answers, the
 * last way in kept, single-use challenges and states with a TTL, lookups
 * released only by their owner.
 */
import { expect } from 'chai';

import { createAccounts } from '../../examples/reference/accounts.ts';
import { CHALLENGE_TTL_MS, createPasskeys, type Passkey } from '../../examples/reference/passkeys.ts';
import { methodKeys } from '../../examples/reference/sign-in-methods.ts';
import { createUpstreamLinks, STATE_TTL_MS } from '../../examples/reference/upstreams.ts';
import * as commands from '../../src/store/commands.ts';
import { keysWithoutTtl, STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

const passkey = (id: string, extra: Partial<Passkey> = {}): Passkey => ({
  id, publicKey: 'cHVibGlj', counter: 5, transports: ['internal', 'hybrid'], name: 'Laptop', createdAt: 1_700_000_000_000,
  deviceType: 'multiDevice', backedUp: true, ...extra,
});

const PERSISTENT = [/account:\{[^}]+\}$/, /account:\{[^}]+\}:(passkeys|upstreams)$/, /account-email:/, /passkey:\{/, /upstream:\{/];

for (const kind of STORE_KINDS) {
  describe(`passkeys and linked accounts (${kind.name} store)`, () => {
    let made: ReturnType<typeof kind.make>;
    let accounts: ReturnType<typeof createAccounts>;
    let passkeys: ReturnType<typeof createPasskeys>;
    let links: ReturnType<typeof createUpstreamLinks>;
    beforeEach(() => {
      made = kind.make(uniquePrefix(`ways-${kind.name}`));
      accounts = createAccounts(made.store);
      passkeys = createPasskeys(made.store);
      links = createUpstreamLinks(made.store);
    });
    afterEach(() => made.done());

    it('keeps a passkey, finds it by credential id, moves its counter forward only, renames it', async () => {
      const ann = await accounts.findOrCreate('ann@example.com');
      expect(await passkeys.add(ann.accountId, passkey('cred-1'))).to.equal(true);
      expect(await passkeys.add(ann.accountId, passkey('cred-1')), 'the same credential twice').to.equal(false);
      const bob = await accounts.create({ name: 'Bob' });
      expect(await passkeys.add(bob.accountId, passkey('cred-1')), 'someone else\'s credential').to.equal(false);
      expect(await passkeys.find('cred-1')).to.deep.equal({ accountId: ann.accountId, passkey: passkey('cred-1') });
      expect(await passkeys.find('nobody')).to.equal(undefined);

      expect(await passkeys.use(ann.accountId, 'cred-1', 6, false)).to.equal('ok');
      expect(await passkeys.use(ann.accountId, 'cred-1', 6, false), 'a counter that does not move').to.equal('counter');
      expect(await passkeys.use(ann.accountId, 'cred-1', 0, false), 'a counter that goes back').to.equal('counter');
      expect(await passkeys.use(ann.accountId, 'gone', 9, false)).to.equal('missing');
      const [used] = await passkeys.list(ann.accountId);
      expect(used).to.include({ counter: 6, backedUp: false, name: 'Laptop' });
      expect(used!.lastUsedAt).to.be.a('number');
      expect(used!.transports).to.deep.equal(['internal', 'hybrid']);

      expect(await passkeys.rename(ann.accountId, 'cred-1', 'Work “laptop” 💻')).to.equal(true);
      expect(await passkeys.rename(ann.accountId, 'gone', 'x')).to.equal(false);
      expect((await passkeys.list(ann.accountId))[0]).to.include({ name: 'Work “laptop” 💻', counter: 6 });

      // Authenticators that keep no counter (0) always pass.
      await passkeys.add(bob.accountId, passkey('cred-0', { counter: 0, transports: [] }));
      expect(await passkeys.use(bob.accountId, 'cred-0', 0, true)).to.equal('ok');
      expect(await passkeys.use(bob.accountId, 'cred-0', 0, true)).to.equal('ok');
      expect((await passkeys.list(bob.accountId))[0]!.transports).to.deep.equal([]);
    });

    it('never removes the last way in: an address, passkeys and linked accounts all count', async () => {
      const lone = await accounts.create({ name: 'Lone' });
      await passkeys.add(lone.accountId, passkey('only'));
      expect(await passkeys.remove(lone.accountId, 'only')).to.deep.equal({ refused: 'last' });
      expect(await passkeys.remove(lone.accountId, 'other')).to.deep.equal({ refused: 'missing' });
      expect(await links.link(lone.accountId, 'social', { sub: 'lone-sub' })).to.equal('linked');
      expect(await passkeys.remove(lone.accountId, 'only')).to.have.property('removed');
      expect(await passkeys.find('only'), 'its owner lookup is gone').to.equal(undefined);
      expect(await links.unlink(lone.accountId, 'social')).to.deep.equal({ refused: 'last' });

      const withAddress = await accounts.findOrCreate('cy@example.com');
      await passkeys.add(withAddress.accountId, passkey('cy-key'));
      expect(await passkeys.remove(withAddress.accountId, 'cy-key')).to.have.property('removed');
    });

    it('links an upstream account to one account only, one per upstream, and unlinks it', async () => {
      const dee = await accounts.findOrCreate('dee@example.com');
      const eli = await accounts.findOrCreate('eli@example.com');
      expect(await links.link(dee.accountId, 'social', { sub: 's-1', verifiedEmail: 'dee@up.example', name: 'Dee' })).to.equal('linked');
      expect(await links.link(dee.accountId, 'social', { sub: 's-1' }), 'again').to.equal('linked');
      expect(await links.link(eli.accountId, 'social', { sub: 's-1' })).to.equal('taken');
      expect(await links.link(dee.accountId, 'social', { sub: 's-2' })).to.equal('exists');
      expect(await links.owner('social', 's-2'), 'a refused link leaves no lookup').to.equal(null);
      expect(await links.link(dee.accountId, 'other', { sub: 's-1' }), 'another upstream, the same sub').to.equal('linked');
      await links.used(dee.accountId, 'social');
      const [social] = (await links.list(dee.accountId)).filter((l) => l.upstream === 'social');
      expect(social).to.include({ sub: 's-1', verifiedEmail: 'dee@up.example', name: 'Dee' });
      expect(social!.lastUsedAt).to.be.at.least(social!.linkedAt);

      expect(await links.unlink(dee.accountId, 'social')).to.have.property('removed');
      expect(await links.owner('social', 's-1')).to.equal(null);
      expect(await links.link(eli.accountId, 'social', { sub: 's-1' }), 'free again').to.equal('linked');
      // A stale link is forgotten only by the account it pointed to.
      await links.forget('social', 's-1', dee.accountId);
      expect(await links.owner('social', 's-1')).to.equal(eli.accountId);
      // A link made before verifiedEmail kept the upstream's `email`, verified or not: it is not read.
      await made.store.run(commands.hset(), [methodKeys(made.store.prefix, eli.accountId).upstreams], ['older', JSON.stringify({ sub: 's-9', email: 'unverified@up.example', linkedAt: 1 })]);
      expect((await links.list(eli.accountId)).find((l) => l.upstream === 'older')).to.deep.equal({ upstream: 'older', sub: 's-9', linkedAt: 1 });
    });

    it('hands out a challenge or an upstream state once, and both expire', async () => {
      await passkeys.putChallenge({ uid: 'uid-1' }, { challenge: 'c-1', purpose: 'sign-up', accountId: 'a-1', name: 'Ann' });
      await passkeys.putChallenge({ uid: 'uid-1' }, { challenge: 'c-2', purpose: 'sign-in' });
      await passkeys.putChallenge({ accountId: 'a-1' }, { challenge: 'c-3', purpose: 'add', accountId: 'a-1', name: 'Key' });
      await links.putState('state-1', { upstream: 'social', mode: 'login', uid: 'uid-1', verifier: 'v', nonce: 'n', startedAt: 1 });
      const ttls = await Promise.all([...await collect(made.store.scan('passkey-challenge:*')), ...await collect(made.store.scan('account:*:passkey-challenge')), ...await collect(made.store.scan('upstream-state:*'))].map((k) => made.store.pttl(k)));
      expect(ttls).to.have.length(3);
      for (const ttl of ttls) expect(ttl).to.be.within(1, Math.max(CHALLENGE_TTL_MS, STATE_TTL_MS));
      expect(await keysWithoutTtl(made.store)).to.deep.equal([]);

      expect(await passkeys.takeChallenge({ uid: 'uid-1' }), 'the newer one replaced the older').to.deep.equal({ challenge: 'c-2', purpose: 'sign-in' });
      expect(await passkeys.takeChallenge({ uid: 'uid-1' })).to.equal(undefined);
      expect(await passkeys.takeChallenge({ accountId: 'a-1' })).to.deep.equal({ challenge: 'c-3', purpose: 'add', accountId: 'a-1', name: 'Key' });
      expect((await collect(made.store.scan('upstream-state:*'))).join(' '), 'its key holds a digest of the state, not the state').to.not.include('state-1');
      expect(await links.peekState('state-1')).to.include({ upstream: 'social', mode: 'login', uid: 'uid-1', startedAt: 1 });
      expect(await links.takeState('state-1')).to.include({ verifier: 'v', nonce: 'n' });
      expect(await links.takeState('state-1')).to.equal(undefined);
      expect(await collect(made.store.scan('upstream-state:*'))).to.deep.equal([]);
    });

    it('keeps only the account, its passkeys and links, and their lookups without a TTL; no credential id or sub in a key', async () => {
      const fay = await accounts.create({ name: 'Fay' });
      await passkeys.add(fay.accountId, passkey('fay-key'));
      await links.link(fay.accountId, 'social', { sub: 'fay-sub' });
      const persistent = await keysWithoutTtl(made.store);
      expect(persistent).to.have.length(5);
      for (const key of persistent) expect(PERSISTENT.some((re) => re.test(key)), key).to.equal(true);
      expect(persistent.join(' ')).to.not.include('fay-key').and.not.include('fay-sub');
    });
  });
}

async function collect(keys: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of keys) out.push(key);
  return out;
}
