/**
 * What the adoption costs on the hot paths (issue 33, docs/performance.md),
 * counted: with the window open, a native token and a moved one cost the same
 * store commands and round trips and no lookup in the previous store; a miss
 * (an unknown token) costs one lookup there per model the request asks for;
 * once the import has closed the window, none.
 */
import { expect } from 'chai';

import { Agent } from '../helpers/agent.ts';
import { authorize, exchange, introspect, refresh, signInBefore, startAdoptHost, type AdoptHost, type OldSignIns } from '../helpers/adopt-host.ts';
import { previousStore, type PreviousStore } from '../helpers/previous/kinds.ts';
import { siteClient } from '../helpers/reference.ts';
import { dropPrefix, testRedis } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

const siteA = siteClient('adopt-costs-a');
const siteB = siteClient('adopt-costs-b');
const UNKNOWN = 'unknown-token-value-0123456789abcdefghijklmn';

describe('the adoption\'s cost on the hot paths, counted (exact figures on a single node; on a Cluster, no lookup either way)', function () {
  this.timeout(60_000);
  let old: OldSignIns[] = [];

  const world = setUp(async () => {
    const redis = testRedis();
    const previous: PreviousStore = await previousStore('example Redis adapter', 'adopt-costs', redis);
    const host: AdoptHost = await startAdoptHost({ clients: [siteA, siteB], before: previous.before, redis, keyPrefix: previous.pluginPrefix });
    old = [];
    for (let i = 0; i < 3; i += 1) old.push(await signInBefore(host.issuer, `costs-${i}`, siteA, siteB));
    // No store read of the window's state during the test (only at start).
    await host.switchToPlugin({ previousAdapter: previous.previousAdapter, adoption: { records: previous.records, checkEveryMs: 3_600_000 } });
    return {
      host, previous,
      async close() {
        await host.close();
        await previous.close();
        await dropPrefix(redis, previous.pluginPrefix);
        await redis.quit();
      },
    };
  });

  /** Store commands, round trips and previous-store lookups of one call. */
  async function cost(work: () => Promise<unknown>): Promise<{ commands: number; trips: number; lookups: number }> {
    const { host, previous } = world();
    const { store } = host.plugin!;
    const before = { commands: store.commandsSent, trips: store.roundTrips, lookups: previous.lookups() };
    await work();
    return { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips, lookups: previous.lookups() - before.lookups };
  }

  /**
   * A token's first use moves it (an old one) and writes its site's "Last used",
   * which leaves after the answer; a second use (within the minute: no write)
   * comes back after that write on the same connection. Then nothing of ours
   * is in flight when a cost is counted.
   */
  async function used(site: typeof siteA, token: string): Promise<void> {
    const { host } = world();
    for (let i = 0; i < 2; i += 1) expect(await introspect(host.issuer, site, token)).to.deep.include({ active: true });
  }

  /**
   * What to compare of two costs: all of it on a single node; on a Cluster
   * the lookups only. There a count also takes in a write of ours that
   * leaves after an answer ("Last used", on another node), and a repeated
   * read of one token was seen to take one round trip or two: moved and
   * native differed by a round trip in one run of five, either way.
   */
  function same(c: { commands: number; trips: number; lookups: number }) {
    return world().host.plugin!.store.singleNode ? c : { lookups: c.lookups };
  }

  async function nativeSignIn(accountId: string) {
    const { host } = world();
    const { code, verifier } = await authorize(host.issuer, new Agent(), siteA, { loginHint: accountId, scope: 'openid offline_access', prompt: 'consent' });
    return (await exchange(host.issuer, siteA, code!, verifier)).json;
  }

  it('introspection: a moved token costs what a native one does (1 command, 1 round trip, no lookup), with the hint or without (2 commands at once)', async () => {
    const { host } = world();
    const native = await nativeSignIn('costs-native');
    const moved = old[0]!;
    await used(siteA, native.access_token!);
    await used(siteA, moved.atA2);
    const hinted = await cost(() => introspect(host.issuer, siteA, native.access_token!, 'access_token'));
    expect(same(await cost(() => introspect(host.issuer, siteA, moved.atA2, 'access_token')))).to.deep.equal(same(hinted));
    const unhinted = await cost(() => introspect(host.issuer, siteA, native.access_token!));
    expect(same(await cost(() => introspect(host.issuer, siteA, moved.atA2)))).to.deep.equal(same(unhinted));
    // docs/redis-keys.md: on a single node one script reads the token with its session and grant (a Cluster reads them in a second round trip).
    if (host.plugin!.store.singleNode) expect({ hinted, unhinted }).to.deep.equal({ hinted: { commands: 1, trips: 1, lookups: 0 }, unhinted: { commands: 2, trips: 1, lookups: 0 } });
    expect(hinted.lookups + unhinted.lookups).to.equal(0);
  });

  it('refresh: a moved refresh token costs what a native one does', async () => {
    const { host } = world();
    const native = await nativeSignIn('costs-native-2');
    const moved = old[1]!;
    await used(siteA, native.refresh_token!);
    await used(siteA, moved.rtA2);
    const nativeCost = await cost(async () => expect((await refresh(host.issuer, siteA, native.refresh_token!)).status).to.equal(200));
    const movedCost = await cost(async () => expect((await refresh(host.issuer, siteA, moved.rtA2)).status).to.equal(200));
    expect(same(movedCost)).to.deep.equal(same(nativeCost));
    if (host.plugin!.store.singleNode) expect(nativeCost).to.deep.equal({ commands: 2, trips: 2, lookups: 0 });
    expect(nativeCost.lookups).to.equal(0);
  });

  it('an unknown token with the window open: one lookup in the previous store for each model the request asks for, beside the same store commands', async () => {
    const { host } = world();
    // With the hint: AccessToken, then RefreshToken (client credentials of another length cost nothing).
    expect(await cost(() => introspect(host.issuer, siteA, UNKNOWN, 'access_token'))).to.deep.equal({ commands: 2, trips: 2, lookups: 2 });
    // Without: both at once.
    expect(await cost(() => introspect(host.issuer, siteA, UNKNOWN))).to.deep.equal({ commands: 2, trips: 1, lookups: 2 });
  });

  it('once the import has closed the window, an unknown token costs no lookup, and moved tokens still answer', async () => {
    const { host } = world();
    const done = await host.plugin!.adoption!.importRecords();
    expect(done.finishedAt).to.be.a('number');
    expect(await cost(() => introspect(host.issuer, siteA, UNKNOWN, 'access_token'))).to.deep.equal({ commands: 2, trips: 2, lookups: 0 });
    expect(await cost(() => introspect(host.issuer, siteA, UNKNOWN))).to.deep.equal({ commands: 2, trips: 1, lookups: 0 });
    await used(siteB, old[2]!.atB);
    const moved = await cost(() => introspect(host.issuer, siteB, old[2]!.atB, 'access_token'));
    expect(moved.lookups).to.equal(0);
    if (host.plugin!.store.singleNode) expect(moved).to.deep.equal({ commands: 1, trips: 1, lookups: 0 });
  });
});
