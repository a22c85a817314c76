import { expect } from 'chai';

import { BoundedMemo } from '../../src/text/bounded-memo.ts';

// The memo behind neutralizeLinks' address checks: its bound is what keeps a
// stream of distinct hostile texts from growing the process without limit.
describe('BoundedMemo (the address memo of neutralizeLinks)', () => {
  it('forgets a key in both generations on delete', () => {
    const memo = new BoundedMemo<string>(4);
    memo.set('a', 'A');
    memo.set('b', 'B');
    memo.set('c', 'C'); // a and b are the old generation now
    memo.set('a', 'A2'); // a in both
    memo.delete('a');
    memo.delete('c');
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).to.deep.equal([undefined, 'B', undefined]);
  });

  it('holds at most its limit, however many distinct keys go in', () => {
    const memo = new BoundedMemo<number>(1000);
    for (let i = 0; i < 10_000; i++) memo.set(`host${i}.example`, i);
    expect(memo.size).to.equal(1000);
    const odd = new BoundedMemo<number>(7);
    for (let i = 0; i < 99; i++) odd.set(`k${i}`, i);
    expect(odd.size).to.equal(6);
  });

  it('keeps at least the last half of its limit of what was set, and answers them', () => {
    const memo = new BoundedMemo<number>(1000);
    for (let i = 0; i < 2_500; i++) memo.set(`k${i}`, i);
    for (let i = 2_000; i < 2_500; i++) expect(memo.get(`k${i}`)).to.equal(i);
    expect(memo.get('k1499')).to.equal(undefined); // two generations back: dropped
  });

  it('answers from the young generation, then from the old one, and forgets what was never set', () => {
    const memo = new BoundedMemo<string>(4);
    memo.set('a', 'A');
    memo.set('b', 'B');
    expect(memo.get('a')).to.equal('A'); // young
    memo.set('c', 'C'); // a and b become the old generation
    expect(memo.size).to.equal(3);
    expect(memo.get('b')).to.equal('B'); // old, copied into the young one
    expect(memo.get('x')).to.equal(undefined);
    expect(memo.size).to.equal(4); // b copied into the young generation; a miss stores nothing
  });

  it('keeps what is used: an old entry that is read survives the next turn of generations', () => {
    const memo = new BoundedMemo<string>(4);
    memo.set('a', 'A');
    memo.set('b', 'B');
    memo.set('c', 'C'); // old: a, b; young: c
    expect(memo.get('a')).to.equal('A'); // copied into young: c, a
    memo.set('d', 'D'); // old: c, a; young: d
    expect(memo.get('a')).to.equal('A');
    expect(memo.get('b')).to.equal(undefined); // not read: dropped
  });

  it('stores a false answer as well as a true one (a miss is worth remembering)', () => {
    const memo = new BoundedMemo<boolean>(4);
    memo.set('report.pdf', false);
    memo.set('x', true);
    memo.set('y', true); // report.pdf now in the old generation
    expect(memo.get('report.pdf')).to.equal(false);
  });

  it('works with a limit below two (one entry per generation)', () => {
    const memo = new BoundedMemo<number>(1);
    memo.set('a', 1);
    memo.set('b', 2);
    memo.set('c', 3);
    expect(memo.size).to.equal(2);
    expect(memo.get('b')).to.equal(2);
  });
});
