/** The arbitrary of the refresh chain's steps: which step, how often (test/e2e/refresh-chain-model.test.ts). */
import fc from 'fast-check';

import { BROWSERS, OMIT, SITE_NAMES } from './model.ts';
import { Block, Foreign, LoseAnswer, LoseWrite, Refresh, RemoveAccess, RemoveMember, RemoveMemberHalfDone, Retry, RevokeAccess, RevokeRefresh, SignIn, SignOut, SignOutEverywhere, Step, Theft, WaitPastLeeway } from './steps.ts';

export function commandArbitrary(withLostWrites: boolean): fc.Arbitrary<Step> {
  const chain = fc.nat(3);
  const pick = fc.nat(5);
  const site = fc.constantFrom(...SITE_NAMES.filter((s) => !OMIT.has(s)));
  const all: [string, number, fc.Arbitrary<Step>][] = [
    ['SignIn', 10, fc.tuple(site, fc.boolean(), fc.nat(BROWSERS - 1)).map(([s, o, b]) => new SignIn(s, o, b))],
    ['Refresh', 16, chain.map((c) => new Refresh(c))],
    ['LoseAnswer', 8, chain.map((c) => new LoseAnswer(c))],
    ['Retry', 10, chain.map((c) => new Retry(c))],
    ['Theft', 4, fc.tuple(chain, pick).map(([c, p]) => new Theft(c, p))],
    ['Foreign', 2, fc.tuple(chain, pick).map(([c, p]) => new Foreign(c, p))],
    ['RevokeRefresh', 6, fc.tuple(chain, pick).map(([c, p]) => new RevokeRefresh(c, p))],
    ['RevokeAccess', 6, fc.tuple(chain, pick).map(([c, p]) => new RevokeAccess(c, p))],
    ['LoseWrite', withLostWrites ? 4 : 0, chain.map((c) => new LoseWrite(c))],
    ['Block', 2, site.map((s) => new Block(s))],
    ['RemoveAccess', 2, site.map((s) => new RemoveAccess(s))],
    ['SignOut', 2, chain.map((c) => new SignOut(c))],
    ['SignOutEverywhere', 1, fc.constant(new SignOutEverywhere())],
    ['RemoveMember', 1, fc.constant(new RemoveMember())],
    ['RemoveMemberHalfDone', 1, fc.constant(new RemoveMemberHalfDone())],
    // Rare: each costs the leeway in time.
    ['WaitPastLeeway', 1, fc.constant(new WaitPastLeeway())],
  ];


  const chosen = all.filter(([n, weight]) => weight > 0 && !OMIT.has(n));
  return fc.oneof(...chosen.map(([, weight, arbitrary]) => ({ weight, arbitrary })));
}
