/**
 * Adopting the plugin with nobody signed out (issue 33, docs/upgrading.md):
 * oidc-provider runs on a previous adapter first, 20 people sign in at two
 * sites, then it restarts with the plugin and `previousAdapter` on the same
 * store, cookie keys and signing key. For each of three previous stores:
 * oidc-provider's example Redis adapter, its example SQL adapter on a real
 * PostgreSQL, and the plugin's own 0.1.0 key layout. Everything through HTTP
 * (the host's calls where a host makes them). The plugin's store is the
 * Cluster in the Cluster pass.
 */
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { Agent } from '../helpers/agent.ts';
import { authorize, consoleApi, exchange, introspect, refresh, revoke, signInBefore, startAdoptHost, type AdoptHost, type OldSignIns } from '../helpers/adopt-host.ts';
import { PREVIOUS_KINDS, previousStore, type PreviousStore } from '../helpers/previous/kinds.ts';
import { siteClient } from '../helpers/reference.ts';
import { dropPrefix, redisValue, testRedis } from '../helpers/redis.ts';

const siteA = siteClient('adopt-a');
const siteB = siteClient('adopt-b');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` holds (a previous copy goes a grace period after its move), at most 10 s. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`);
    await sleep(100);
  }
}

for (const kind of PREVIOUS_KINDS) describe(`taking over from ${kind.startsWith('the ') ? '' : 'the '}${kind}: 20 people signed in at two sites before the switch`, function () {
  this.timeout(120_000);
  // The 0.1.0 layout kept sessions and grants where the plugin reads them: only its tokens and codes move.
  const sessionsMove = kind !== 'the plugin\'s 0.1.0 key layout';
  let redis: Redis | Cluster;
  let previous: PreviousStore;
  let host: AdoptHost;
  const people: OldSignIns[] = [];
  /** A second browser of the people Block site and sign out everywhere are tried on. */
  const secondBrowser = new Map<number, OldSignIns>();
  const person = (i: number) => people[i]!;

  before(async () => {
    redis = testRedis();
    previous = await previousStore(kind, `adopt-${PREVIOUS_KINDS.indexOf(kind)}`, redis);
    host = await startAdoptHost({ clients: [siteA, siteB], before: previous.before, redis, keyPrefix: previous.pluginPrefix, beforeProvider: previous.beforeProvider });
    for (let i = 0; i < 20; i += 1) people.push(await signInBefore(host.issuer, `adopt-person-${String(i).padStart(2, '0')}`, siteA, siteB));
    for (const i of [5, 6]) secondBrowser.set(i, await signInBefore(host.issuer, person(i).accountId, siteA, siteB, new Agent()));
    await host.switchToPlugin({ previousAdapter: previous.previousAdapter, adoption: { records: previous.records } });
  });
  after(async () => {
    await host?.close();
    await previous?.close();
    await dropPrefix(redis, previous.pluginPrefix);
    await redis.quit();
  });

  const plugin = () => host.plugin!;
  const recordKey = (model: string, id: string) => adapterKeys(previous.pluginPrefix).record(model, id);

  it('every old session is still signed in, and consent given before is not asked again: prompt=none at site B gives each of the 20 a code', async () => {
    for (const p of people) {
      const { code, error } = await authorize(host.issuer, p.agent, siteB, { prompt: 'none' });
      expect({ code: typeof code, error }, p.accountId).to.deep.equal({ code: 'string', error: undefined });
    }
    expect(plugin().adoption!.counts().moved.Session ?? 0).to.equal(sessionsMove ? 20 : 0);
  });

  it('old access tokens introspect as before, to their own site only', async () => {
    const p = person(0);
    const answer = await introspect(host.issuer, siteA, p.atA2);
    expect(answer).to.deep.include({ active: true, sub: p.accountId, client_id: siteA.client_id, scope: 'openid offline_access' });
    expect(await introspect(host.issuer, siteB, p.atA2)).to.deep.equal({ active: false });
    expect(await introspect(host.issuer, siteB, p.atB)).to.deep.include({ active: true, sub: p.accountId, client_id: siteB.client_id });
    // Moved: in the plugin's store under its hash, and gone from the previous store after the grace period.
    expect(await plugin().store.hmget(recordKey('AccessToken', p.atA2), ['p'])).to.not.deep.equal([null]);
    await eventually(async () => !(await previous.holds('AccessToken', p.atA2)), 'the previous copy removed');
  });

  it('an old refresh token refreshes and rotates into the plugin\'s store; presented again after its successor was used, it is theft and the chain ends', async () => {
    const p = person(1);
    const next = await refresh(host.issuer, siteA, p.rtA2);
    expect(next.status, JSON.stringify(next.json)).to.equal(200);
    expect(await plugin().store.hmget(recordKey('RefreshToken', next.json.refresh_token!), ['p'])).to.not.deep.equal([null]);
    const third = await refresh(host.issuer, siteA, next.json.refresh_token!);
    expect(third.status).to.equal(200);
    const stolen = await refresh(host.issuer, siteA, p.rtA2);
    expect({ status: stolen.status, error: stolen.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect((await refresh(host.issuer, siteA, third.json.refresh_token!)).status).to.equal(400);
    expect(await introspect(host.issuer, siteA, third.json.access_token!)).to.deep.equal({ active: false });
    expect(host.lines.map((l) => l.message)).to.include('refresh token reuse detected: grant revoked');
  });

  it('a refresh token the previous store had consumed already is theft: its chain ends in both stores', async () => {
    const p = person(2);
    const before = host.lines.filter((l) => l.message === 'refresh token reuse detected: grant revoked').length;
    const reused = await refresh(host.issuer, siteA, p.rtA1);
    expect({ status: reused.status, error: reused.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(host.lines.filter((l) => l.message === 'refresh token reuse detected: grant revoked')).to.have.length(before + 1);
    // Its successor never moved: the previous store's copy went with the chain.
    expect(await previous.holds('RefreshToken', p.rtA2)).to.equal(false);
    expect((await refresh(host.issuer, siteA, p.rtA2)).json.error).to.equal('invalid_grant');
    expect(await introspect(host.issuer, siteA, p.atA2)).to.deep.equal({ active: false });
  });

  it('the code issued before the switch and not exchanged exchanges once', async () => {
    const p = person(3);
    const first = await exchange(host.issuer, siteA, p.code.code, p.code.verifier);
    expect(first.status, JSON.stringify(first.json)).to.equal(200);
    expect(first.json).to.include.keys('access_token', 'id_token');
    const again = await exchange(host.issuer, siteA, p.code.code, p.code.verifier);
    expect({ status: again.status, error: again.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
  });

  it('RFC 7009 revocation ends an old token that had not moved, in both stores', async () => {
    const p = person(4);
    expect(await revoke(host.issuer, siteA, p.atA2)).to.equal(200);
    expect(await introspect(host.issuer, siteA, p.atA2)).to.deep.equal({ active: false });
    await eventually(async () => !(await previous.holds('AccessToken', p.atA2)), 'the previous copy removed');
    expect(await introspect(host.issuer, siteA, p.atA2)).to.deep.equal({ active: false });
  });

  it('Block site ends the person\'s grants at the site, the ones still in the previous store too', async () => {
    const p = person(5);
    const other = secondBrowser.get(5)!;
    // The site is in the person's Connected sites once a grant of it moved (here by its site's introspection).
    expect(await introspect(host.issuer, siteA, p.atA2)).to.deep.include({ active: true });
    expect((await consoleApi(host.issuer, p.agent, 'POST', `/sites/${siteA.client_id}/block`)).status).to.equal(204);
    expect((await refresh(host.issuer, siteA, p.rtA2)).json.error).to.equal('invalid_grant');
    // The other browser's grant at the site had not moved.
    expect(await introspect(host.issuer, siteA, other.atA2)).to.deep.equal({ active: false });
    expect((await refresh(host.issuer, siteA, other.rtA2)).json.error).to.equal('invalid_grant');
    const silent = await authorize(host.issuer, other.agent, siteA, { prompt: 'none' });
    expect(silent.code).to.equal(undefined);
    // Site B is untouched.
    expect(await introspect(host.issuer, siteB, other.atB)).to.deep.include({ active: true });
  });

  it('sign out everywhere ends the person\'s sessions, the ones still in the previous store too (an offline_access chain lives on)', async () => {
    const p = person(6);
    const other = secondBrowser.get(6)!;
    expect((await consoleApi(host.issuer, p.agent, 'POST', '/sessions/end-all')).status).to.equal(200);
    const silent = await authorize(host.issuer, other.agent, siteB, { prompt: 'none' });
    expect(silent).to.deep.include({ code: undefined, error: 'login_required' });
    expect((await refresh(host.issuer, siteB, other.rtB)).json.error).to.equal('invalid_grant');
    expect(await introspect(host.issuer, siteB, other.atB)).to.deep.equal({ active: false });
    expect((await refresh(host.issuer, siteA, other.rtA2)).status).to.equal(200);
  });

  it('endSiteAccess ends every old token of the site, moved or not; the other site is untouched', async () => {
    const [moved, waiting] = [person(7), person(8)];
    expect(await introspect(host.issuer, siteA, moved.atA2)).to.deep.include({ active: true });
    await plugin().endSiteAccess(siteA.client_id);
    expect(await introspect(host.issuer, siteA, moved.atA2)).to.deep.equal({ active: false });
    expect(await introspect(host.issuer, siteA, waiting.atA2)).to.deep.equal({ active: false });
    expect((await refresh(host.issuer, siteA, waiting.rtA2)).json.error).to.equal('invalid_grant');
    expect(await introspect(host.issuer, siteB, waiting.atB)).to.deep.include({ active: true });
  });

  it('deleteAccount leaves nothing of the person in either store', async () => {
    const p = person(13);
    expect(await previous.naming(p.accountId)).to.not.deep.equal([]);
    await plugin().deleteAccount(p.accountId);
    expect(await previous.naming(p.accountId)).to.deep.equal([]);
    const left: string[] = [];
    for await (const key of plugin().store.scan('*')) if (key.includes(p.accountId) || (await redisValue(redis, key)).includes(p.accountId)) left.push(key);
    expect(left).to.deep.equal([]);
    expect(await introspect(host.issuer, siteB, p.atB)).to.deep.equal({ active: false });
  });

  it('the bulk import moves the rest: the console lists the old grants\' sites, the window closes, and then a miss costs no lookup', async () => {
    const p = person(14);
    const sites = async () => ((await consoleApi(host.issuer, p.agent, 'GET', '/sites')).body as { clientId: string }[]).map((s) => s.clientId).sort();
    expect(await sites()).to.deep.equal(sessionsMove ? [siteB.client_id] : [siteA.client_id, siteB.client_id]);
    const dry = await plugin().adoption!.importRecords({ dryRun: true });
    expect(dry.moved).to.be.above(0);
    expect(await previous.holds('AccessToken', p.atA2)).to.equal(true);
    const seen: number[] = [];
    const done = await plugin().adoption!.importRecords({ onProgress: (progress) => seen.push(progress.seen) });
    expect(done.finishedAt).to.be.a('number');
    expect(done.failed).to.equal(0);
    expect(seen.length).to.be.above(0);
    expect(await sites()).to.deep.equal([siteA.client_id, siteB.client_id]);
    expect(await previous.holds('AccessToken', p.atA2)).to.equal(false);
    expect(await introspect(host.issuer, siteA, person(15).atA2)).to.deep.include({ active: false }); // ended by endSiteAccess above
    expect(await introspect(host.issuer, siteB, person(15).atB)).to.deep.include({ active: true, sub: person(15).accountId });
    const status = await plugin().adoption!.status();
    expect({ open: status.open, closedBy: status.closedBy }).to.deep.equal({ open: false, closedBy: 'import' });
    const lookups = previous.lookups();
    expect(await introspect(host.issuer, siteA, 'no-such-token-0123456789abcdef0123456789abc')).to.deep.equal({ active: false });
    expect(previous.lookups()).to.equal(lookups);
  });
});
