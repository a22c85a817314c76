import { expect } from 'chai';

import { pooledRandomBytes, randomId } from '../../src/random-pool.ts';

// The pool behind notification ids, theft-notice ids and the IVs of sealed
// refresh answers: an IV or id handed out twice would be a real flaw.
describe('pooledRandomBytes and randomId', () => {
  it('hands out every byte once: 20,000 draws across several refills are all distinct, of the size asked', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) {
      const bytes = pooledRandomBytes(12);
      expect(bytes.length).to.equal(12);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).to.equal(20_000);
  });

  it('copies out of the pool: a draw does not change when the pool is refilled', () => {
    const first = pooledRandomBytes(16);
    const copy = Buffer.from(first);
    for (let i = 0; i < 600; i += 1) pooledRandomBytes(16); // more than one pool's worth
    expect(first.equals(copy)).to.equal(true);
  });

  it('draws a whole pool at once, and refuses more than a pool or a size that is not a whole number', () => {
    expect(pooledRandomBytes(4096).length).to.equal(4096);
    expect(pooledRandomBytes(0).length).to.equal(0);
    expect(() => pooledRandomBytes(4097)).to.throw(RangeError);
    expect(() => pooledRandomBytes(1.5)).to.throw(RangeError);
    expect(() => pooledRandomBytes(-1)).to.throw(RangeError);
  });

  it('makes 22-character base64url ids by default (128 bits), other sizes on request', () => {
    expect(randomId()).to.match(/^[A-Za-z0-9_-]{22}$/);
    expect(randomId(32)).to.match(/^[A-Za-z0-9_-]{43}$/);
    const ids = new Set(Array.from({ length: 5000 }, () => randomId()));
    expect(ids.size).to.equal(5000);
  });

  it('is not all zeros or one repeated byte (the pool is filled before its first use)', () => {
    const bytes = pooledRandomBytes(64);
    expect(new Set(bytes).size).to.be.greaterThan(16);
  });
});
