/**
 * The reference provider's addresses and names (issue 28 "Names and
 * addresses"; docs/security.md): addresses compared by addressKey (NFKC,
 * then a full case fold), an account found under the key of the form before
 * it (docs/upgrading.md), names that look like addresses, and the domains an
 * upstream owns (`trustedEmailDomains`, exact match), on both stores.
 */
import { expect } from 'chai';

import { addressKey, addressKeyForms, createAccounts, looksLikeAddress, normalizeDomain, normalizeEmail } from '../../examples/reference/accounts.ts';
import { trustedDomain, type Upstream } from '../../examples/reference/upstreams.ts';
import { claim, hset } from '../../src/store-kit.ts';
import { STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

describe('addresses, names and trusted domains of the reference provider', () => {
  it('compares addresses by addressKey: trimmed, NFKC, a full case fold, NFKC again; letters go to the address as normalizeEmail keeps it', () => {
    expect(addressKey(' Kate@Example.TEST ')).to.equal('kate@example.test');
    expect(addressKey('\u212Aate@example.test'), 'KELVIN SIGN').to.equal('kate@example.test');
    expect(addressKey('\uFF2B\uFF41te@example.test'), 'FULLWIDTH').to.equal('kate@example.test');
    expect(addressKey('\u017Fam@example.test'), 'LONG S').to.equal('sam@example.test');
    expect(addressKey('STRASSE@example.test')).to.equal(addressKey('straße@example.test'));
    expect(addressKey('\u1E9Ee@example.test'), 'CAPITAL SHARP S').to.equal('sse@example.test');
    expect(addressKey('ΌΣΟΣ@example.test')).to.equal(addressKey('όσος@example.test')).and.equal(addressKey('όσοσ@example.test'));
    expect(addressKey('kate@example.test')).to.not.equal(addressKey('kāte@example.test'));
    expect(normalizeEmail(' Straße@Example.test ')).to.equal('straße@example.test');
  });

  it('keys the domain in its IDNA (ASCII) form without a trailing dot, and knows the keys the same address had before', () => {
    for (const spelling of ['v@bücher.test', 'V@BÜCHER.TEST', 'v@xn--bcher-kva.test', 'v@bücher.test.', ' v@XN--BCHER-KVA.test. ', 'v@ｂücher.test']) {
      expect(addressKey(spelling), spelling).to.equal('v@xn--bcher-kva.test');
    }
    expect(addressKey('boss@corp.test.')).to.equal('boss@corp.test');
    // The part before the @ is folded (ß -> ss), the domain is IDNA's (faß.de is not fass.de).
    expect(addressKey('Straße@faß.de')).to.equal('strasse@xn--fa-hia.de');
    expect(addressKey('straße@fass.de')).to.not.equal(addressKey('straße@faß.de'));
    // A domain that is no domain name is folded as before.
    expect(addressKey('Kate@Localhost')).to.equal('kate@localhost');
    expect(addressKeyForms('v@xn--bcher-kva.test')).to.include.members(['v@xn--bcher-kva.test', 'v@bücher.test', 'v@xn--bcher-kva.test.', 'v@bücher.test.']);
    expect(addressKeyForms('Straße@faß.de')).to.include.members(['strasse@xn--fa-hia.de', 'strasse@fass.de', 'straße@faß.de']);
    expect(addressKeyForms('kate@example.test')).to.deep.equal(['kate@example.test', 'kate@example.test.']);
  });

  it('a name looks like an address when it holds an @ after NFKC (FULLWIDTH and SMALL COMMERCIAL AT too)', () => {
    for (const name of ['someone@example.test', 'a@b', '@', 'victim\uFF20bar.test', 'victim\uFE6Bbar.test']) expect(looksLikeAddress(name), name).to.equal(true);
    for (const name of ['Kate', 'Kate at example.test', 'Ünal Öz', 'محمد']) expect(looksLikeAddress(name), name).to.equal(false);
  });

  it('trusts a domain by exact match after normalisation: no suffix, no subdomain, no parent', () => {
    expect(normalizeDomain(' Example.TEST. ')).to.equal('example.test');
    expect(normalizeDomain('bücher.example')).to.equal('xn--bcher-kva.example');
    for (const bad of ['', 'example', '*.example.test', '.example.test', 'exa mple.test', 'a..test', 'user@example.test']) expect(normalizeDomain(bad), bad).to.equal('');
    const upstream = { id: 'u', name: 'U', issuer: 'https://u.example', client_id: 'c', client_secret: 's', trustedEmailDomains: ['example.test', 'bücher.example'] } satisfies Upstream;
    expect(trustedDomain(upstream, 'kate@example.test')).to.equal(true);
    expect(trustedDomain(upstream, 'kate@EXAMPLE.test.')).to.equal(true);
    expect(trustedDomain(upstream, 'kate@ｅxample.test'), 'FULLWIDTH e: NFKC').to.equal(true);
    expect(trustedDomain(upstream, 'hans@xn--bcher-kva.example')).to.equal(true);
    for (const address of ['eve@evil-example.test', 'eve@sub.example.test', 'eve@example.test.evil', 'eve@test', 'eve@example.test@evil.test', 'example.test']) {
      expect(trustedDomain(upstream, address), address).to.equal(false);
    }
    expect(trustedDomain({ ...upstream, trustedEmailDomains: undefined }, 'kate@example.test')).to.equal(false);
  });
});

for (const kind of STORE_KINDS) {
  describe(`accounts by address (${kind.name} store)`, () => {
    let made: ReturnType<typeof kind.make>;
    let accounts: ReturnType<typeof createAccounts>;
    beforeEach(() => {
      made = kind.make(uniquePrefix(`accounts-${kind.name}`));
      accounts = createAccounts(made.store);
    });
    afterEach(() => made.done());

    it('one account per addressKey: a lookalike finds it and never makes a second one; `created` says which', async () => {
      const kate = await accounts.claim('kate@example.test', { locale: 'de' });
      expect(kate.created).to.equal(true);
      expect(kate.account).to.include({ email: 'kate@example.test', locale: 'de' });
      for (const lookalike of ['\u212Aate@example.test', 'ｋａｔｅ@example.test', ' KATE@example.test']) {
        expect(await accounts.claim(lookalike), lookalike).to.deep.equal({ account: kate.account, created: false });
        expect((await accounts.findByEmail(lookalike))!.accountId, lookalike).to.equal(kate.account.accountId);
      }
      // The address letters go to is the one the account was made with.
      expect((await accounts.findOrCreate('STRASSE@example.test')).email).to.equal('strasse@example.test');
      expect((await accounts.findOrCreate('straße@example.test')).email).to.equal('strasse@example.test');
    });

    it('finds an account under a key of the form before the domain\'s IDNA form, whichever spelling asks, and adds no second one', async () => {
      for (const [stored, id, asking] of [
        ['w@bücher.test', 'old-idna-1', ['w@xn--bcher-kva.test', 'W@Bücher.test.', 'w@bücher.test']],
        ['boss@corp.test.', 'old-dot-1', ['boss@corp.test', 'Boss@Corp.Test.']],
      ] as const) {
        await made.store.run(hset(), [`${made.store.prefix}account:{${id}}`], ['email', stored, 'createdAt', 1]);
        await made.store.run(claim(), [`${made.store.prefix}account-email:{${stored}}`], [id]);
        for (const address of asking) {
          expect((await accounts.findByEmail(address))?.accountId, address).to.equal(id);
          expect(await accounts.claim(address), address).to.deep.include({ created: false });
        }
      }
    });

    it('finds an account under the key of the form before addressKey (trim and lower-case only), and adds no second one', async () => {
      const old = 'ｋａｔｅ@example.test';
      const id = 'old-account-1';
      await made.store.run(hset(), [`${made.store.prefix}account:{${id}}`], ['email', old, 'createdAt', 1]);
      await made.store.run(claim(), [`${made.store.prefix}account-email:{${old}}`], [id]);
      expect((await accounts.findByEmail(old))!.accountId).to.equal(id);
      expect((await accounts.claim(old)).created).to.equal(false);
      expect((await accounts.claim(old)).account.accountId).to.equal(id);
    });
  });
}
