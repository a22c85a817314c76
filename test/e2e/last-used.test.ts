import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('used-site');
const other = siteClient('used-other');
const INTERVAL = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** "Last used" in Connected sites: when the site last used its access, at no round trip to the hot paths. */
describe(`last used (one write per site and person per ${INTERVAL} s)`, () => {
  let h: Harness;
  let config: oidc.Configuration;

  before(async () => {
    h = await startHarness('last-used', { clients: [site, other], plugin: { lastUsedInterval: INTERVAL } });
    config = await discover(h, site);
  });
  after(() => h.close());

  async function lastUsed(agent: Agent): Promise<number | null> {
    const res = await agent.request('GET', `${h.issuer}/console/api/sites`, undefined, { accept: 'application/json' });
    const [only] = JSON.parse(res.body) as { lastUsedAt: string | null }[];
    return only!.lastUsedAt === null ? null : Date.parse(only!.lastUsedAt);
  }

  /** Waits for the write, which the request that used the access does not wait for. */
  async function lastUsedAfter(agent: Agent, after: number): Promise<number> {
    for (let i = 0; i < 50; i += 1) {
      const at = await lastUsed(agent);
      if (at !== null && at >= after) return at;
      await sleep(20);
    }
    throw new Error(`last used did not move past ${new Date(after).toISOString()}`);
  }

  async function measure(work: () => Promise<unknown>) {
    const { store } = h.reference.plugin;
    const before = { commands: store.commandsSent, trips: store.roundTrips };
    await work();
    return { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips };
  }

  it('moves after a refresh, without a round trip of its own: a refresh that writes it takes the round trips of one that does not', async () => {
    const { store } = h.reference.plugin;
    // The benchmark's figures (docs/redis-keys.md "Round trips": single node 3 commands in 3 round trips (the token
    // endpoint's writes are one script), Cluster 7 commands in 4 round trips (one script per hash slot; its
    // command count varies: a script's first use on each node sends its body once more).
    const figures = { commands: store.singleNode ? 3 : 7, trips: store.singleNode ? 3 : 4 };
    const counted = (m: { commands: number; trips: number }) => (store.singleNode ? m : { ...m, commands: figures.commands });
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'used@example.com');
    const signedIn = await lastUsedAfter(agent, 0);
    expect(signedIn, 'the code exchange used the access').to.be.closeTo(Date.now(), 10_000);

    // Within the interval: nothing written, the benchmark's figures exactly.
    let current = (await oidc.refreshTokenGrant(config, tokens.refresh_token!)).refresh_token!;
    expect(counted(await measure(() => oidc.refreshTokenGrant(config, current).then((t) => { current = t.refresh_token!; })))).to.deep.equal(figures);
    expect(await lastUsed(agent)).to.equal(signedIn);

    // Past it: the same figures. On a single node the write runs inside the token endpoint's one
    // script; on a Cluster it is one command more (not counted there), sent beside the account lookup.
    await sleep(INTERVAL * 1000 + 100);
    const from = Date.now();
    expect(counted(await measure(() => oidc.refreshTokenGrant(config, current)))).to.deep.equal(figures);
    const moved = await lastUsedAfter(agent, from);
    expect(moved).to.be.greaterThan(signedIn).and.at.most(Date.now());
  });

  it('moves after userinfo and after introspection of the site\'s own token; never for another site\'s', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'used2@example.com');
    const first = await lastUsedAfter(agent, 0);
    if (h.reference.plugin.store.singleNode) {
      expect(await measure(() => oidc.tokenIntrospection(config, tokens.access_token, { token_type_hint: 'access_token' }))).to.deep.equal({ commands: 1, trips: 1 });
    }
    await sleep(INTERVAL * 1000 + 100);
    let from = Date.now();
    await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    const afterUserinfo = await lastUsedAfter(agent, from);
    expect(afterUserinfo).to.be.greaterThan(first);
    await sleep(INTERVAL * 1000 + 100);
    // Another site introspecting this token learns nothing and uses nothing.
    expect(await oidc.tokenIntrospection(await discover(h, other), tokens.access_token)).to.deep.equal({ active: false });
    await sleep(200);
    expect(await lastUsed(agent)).to.equal(afterUserinfo);
    from = Date.now();
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).to.equal(true);
    expect(await lastUsedAfter(agent, from)).to.be.greaterThan(afterUserinfo);
  });
});
