/**
 * A service session that ends by its lifetime (no one signed out) is a loss
 * of access its sites hear of the standard way: one CAEP session-revoked SET
 * (reason expired) to a site's stream and one back-channel logout token,
 * from the sweeper (docs/session-expiry.md). A session signed out before it
 * expired is not told again; two sweepers (two provider instances) tell once.
 * On Redis and on the embedded store (the scripts' twins, the in-process sweep).
 */
import { expect } from 'chai';

import { createReferenceProvider, type ReferenceProvider } from '../../examples/reference/provider.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { sharedJwks } from '../helpers/instance.ts';
import { signIn } from '../helpers/reference.ts';
import { testRedis } from '../helpers/redis.ts';
import { pastLifetime, received, settled, startExpiryService, TTL_SECONDS } from '../helpers/session-expiry.ts';
import { setUp } from '../helpers/set-up.ts';
import { verifySet } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const silent = { info() {}, warn() {}, error() {} };

for (const embedded of [false, true]) describe(`session expiry (${embedded ? 'embedded store' : 'Redis'})`, () => {
  // Sweeps every 200 ms, as `sessionExpiry.sweepEveryMs` says.
  const service = setUp(() => startExpiryService('expiry', { embedded, sweepEveryMs: 200 }));

  it('a session that ends by its lifetime: the site gets one session-revoked SET (reason expired, in the person\'s language too) and one logout token', async () => {
    const s = service();
    const agent = new Agent();
    const { tokens } = await signIn(s.h, s.config, agent, 'lapse@example.com');
    const claims = tokens.claims()!;
    // The person reads German.
    await s.h.reference.plugin.preferences.setLocale((await s.h.reference.accounts.findByEmail('lapse@example.com'))!.accountId, 'de');
    const from = { sets: s.ssf.pushed.length, tokens: s.bcl.tokens.length };
    // Nothing is told while the session lives.
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);

    await received(s, from.sets + 1, from.tokens + 1);
    const sets = s.ssf.pushed.slice(from.sets);
    expect(sets).to.have.length(1);
    const set = await verifySet(sets[0]!.set, s.metadata, 'exp-site');
    expect(set.type).to.equal(`${CAEP}/session-revoked`);
    expect(set.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: s.h.issuer, sub: claims.sub });
    expect(set.event).to.deep.equal({
      event_timestamp: set.event.event_timestamp,
      initiating_entity: 'policy',
      reason_admin: { en: 'The service session expired.', de: 'Die Sitzung beim Dienst ist abgelaufen.' },
      reason_user: { en: 'Your session expired.', de: 'Ihre Sitzung ist abgelaufen.' },
    });
    // When the session ended: its lifetime after the last save (the sign-in at the site).
    expect(set.event.event_timestamp).to.be.a('number').and.at.most(Math.ceil(Date.now() / 1000)).and.at.least(claims.iat);
    const logoutTokens = s.bcl.tokens.slice(from.tokens);
    expect(logoutTokens).to.have.length(1);
    expect(await s.bcl.verify(logoutTokens[0]!, s.h.issuer, 'exp-site')).to.include({ sub: claims.sub, sid: claims.sid });

    // Told once: a sweep now finds nothing more.
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
    await settled(s.h);
    expect(s.ssf.pushed.length - from.sets).to.equal(1);
    expect(s.bcl.tokens.length - from.tokens).to.equal(1);
  });

  it('a session signed out before it expired is not told again when its lifetime passes', async () => {
    const s = service();
    const agent = new Agent();
    const { tokens } = await signIn(s.h, s.config, agent, 'leaver@example.com');
    const started = Date.now();
    const from = { sets: s.ssf.pushed.length, tokens: s.bcl.tokens.length };
    const page = await agent.get(`${s.h.issuer}/session/end`);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    await received(s, from.sets + 1, from.tokens + 1);

    await pastLifetime(started);
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
    await settled(s.h);
    const sets = await Promise.all(s.ssf.pushed.slice(from.sets).map((p) => verifySet(p.set, s.metadata, 'exp-site')));
    expect(sets.map((set) => set.event.reason_user)).to.deep.equal([{ en: 'You signed out.' }]);
    expect(s.bcl.tokens.length - from.tokens).to.equal(1);
    expect(await s.bcl.verify(s.bcl.tokens.at(-1)!, s.h.issuer, 'exp-site')).to.include({ sid: tokens.claims()!.sid });
  });

  it('"Stay signed in" told the asking site: at the session\'s expiry only its other site is told', async () => {
    const s = service();
    const agent = new Agent();
    const atSite = await signIn(s.h, s.config, agent, 'stayer@example.com');
    // The same session signs in at the other site (no question: already signed in).
    const atOther = await signIn(s.h, s.otherConfig, agent, 'stayer@example.com');
    const from = { sets: s.ssf.pushed.length, tokens: s.bcl.tokens.length };
    const page = await agent.get(`${s.h.issuer}/session/end?client_id=exp-site`);
    await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
    const stayed = Date.now();
    await received(s, from.sets + 1, from.tokens + 1);

    await pastLifetime(stayed);
    await received(s, from.sets + 1, from.tokens + 2);
    await settled(s.h);
    const sets = await Promise.all(s.ssf.pushed.slice(from.sets).map((p) => verifySet(p.set, s.metadata, 'exp-site')));
    expect(sets.map((set) => set.event.reason_user)).to.deep.equal([{ en: 'You signed out.' }]);
    const [first, second, ...more] = s.bcl.tokens.slice(from.tokens);
    expect(more).to.deep.equal([]);
    expect(await s.bcl.verify(first!, s.h.issuer, 'exp-site')).to.include({ sid: atSite.tokens.claims()!.sid });
    expect(await s.bcl.verify(second!, s.h.issuer, 'exp-other')).to.include({ sid: atOther.tokens.claims()!.sid });
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
  });

  it('a session whose site was blocked, or whose person the service ended everywhere, is not told again when its lifetime passes', async () => {
    const s = service();
    const blocked = await signIn(s.h, s.config, new Agent(), 'blocker@example.com');
    const ended = await signIn(s.h, s.config, new Agent(), 'ended@example.com');
    const started = Date.now();
    const from = { sets: s.ssf.pushed.length, tokens: s.bcl.tokens.length };
    const idOf = async (email: string) => (await s.h.reference.accounts.findByEmail(email))!.accountId;
    expect(await s.h.reference.plugin.blockSite(await idOf('blocker@example.com'), 'exp-site')).to.equal('blocked');
    await s.h.reference.plugin.endAccountAccess(await idOf('ended@example.com'));
    // Each told once now: two logout tokens, one session-revoked (the service's; Block site is an event the stream did not ask for).
    await received(s, from.sets + 1, from.tokens + 2);

    await pastLifetime(started);
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
    await settled(s.h);
    const sets = await Promise.all(s.ssf.pushed.slice(from.sets).map((p) => verifySet(p.set, s.metadata, 'exp-site')));
    expect(sets.map((set) => [(set.payload.sub_id as { sub: string }).sub, set.event.initiating_entity])).to.deep.equal([[ended.tokens.claims()!.sub, 'admin']]);
    const tokens = await Promise.all(s.bcl.tokens.slice(from.tokens).map((t) => s.bcl.verify(t, s.h.issuer, 'exp-site')));
    expect(tokens.map((t) => t.sid).toSorted()).to.deep.equal([blocked.tokens.claims()!.sid, ended.tokens.claims()!.sid].toSorted());
  });

  it('a session kept alive by activity is told at its later expiry, not at the first', async () => {
    const s = service();
    const agent = new Agent();
    await signIn(s.h, s.config, agent, 'active@example.com');
    const started = Date.now();
    const from = { sets: s.ssf.pushed.length, tokens: s.bcl.tokens.length };
    // The sweeps are this test's own from here (the worker's SETs wait meanwhile).
    await s.h.reference.plugin.stopLetterWorker();
    let again = 0;
    try {
      // Activity saves the session again (the sign-out question, not answered): its lifetime starts anew.
      await sleep(Math.max(0, started + 2000 - Date.now()));
      expect((await agent.get(`${s.h.issuer}/session/end`)).status).to.equal(200);
      again = Date.now();
      // Past the first expiry: the session lives on, nothing is told.
      await pastLifetime(started);
      expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
      await pastLifetime(again);
      expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(1);
    } finally {
      s.h.reference.plugin.startLetterWorker();
    }
    await received(s, from.sets + 1, from.tokens + 1);
    await settled(s.h);
    const sets = await Promise.all(s.ssf.pushed.slice(from.sets).map((p) => verifySet(p.set, s.metadata, 'exp-site')));
    expect(sets.map((set) => set.event.reason_user)).to.deep.equal([{ en: 'Your session expired.' }]);
    expect(sets[0]!.event.event_timestamp).to.be.at.least(Math.floor(again / 1000) + TTL_SECONDS);
    expect(s.bcl.tokens.length - from.tokens).to.equal(1);
  });
});

describe('session expiry: two sweepers (two provider instances on one Redis) tell once', () => {
  let second: ReferenceProvider;
  const secondRedis = testRedis();
  const service = setUp(async () => {
    const jwks = JSON.parse(await sharedJwks()) as { keys: never[] };
    // The scheduled sweep would rarely run here: the test runs both sweeps itself.
    const s = await startExpiryService('expiry-two', { embedded: false, sweepEveryMs: 3_600_000, jwks });
    second = await createReferenceProvider({
      logger: silent, issuer: s.h.issuer, clients: [s.site], redis: secondRedis, keyPrefix: s.h.prefix, smtpUrl: s.h.smtp.url,
      cookieKeys: ['test-cookie-key-0123456789'], jwks, allowPrivateFetchHosts: ['127.0.0.1'], sessionTtlSeconds: TTL_SECONDS,
      plugin: { sessionExpiry: { sweepEveryMs: 3_600_000 } },
    });
    return { ...s, async close() { await second.close(); await secondRedis.quit(); await s.close(); } };
  });

  it('both sweep at once after the lifetime: one SET, one logout token', async () => {
    const s = service();
    const agent = new Agent();
    const { tokens } = await signIn(s.h, s.config, agent, 'twice@example.com');
    const started = Date.now();
    await pastLifetime(started);
    const told = await Promise.all([s.h.reference.plugin.sessionExpiry.sweep(), second.plugin.sessionExpiry.sweep(), s.h.reference.plugin.sessionExpiry.sweep()]);
    expect(told.toSorted()).to.deep.equal([0, 0, 1]);
    await received(s, 1, 1);
    await settled(s.h);
    expect(s.ssf.pushed).to.have.length(1);
    expect((await verifySet(s.ssf.pushed[0]!.set, s.metadata, 'exp-site')).event.reason_user).to.deep.equal({ en: 'Your session expired.' });
    expect(s.bcl.tokens).to.have.length(1);
    expect(await s.bcl.verify(s.bcl.tokens[0]!, s.h.issuer, 'exp-site')).to.include({ sub: tokens.claims()!.sub, sid: tokens.claims()!.sid });
  });
});
