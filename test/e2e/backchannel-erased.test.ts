/**
 * A deleted person's back-channel logouts beside everyone else's
 * (docs/backchannel-logout.md "A deleted person's logouts"): one the site
 * never takes is given up after `attempts` with nothing recorded and no one
 * told; deleting one person leaves another's logouts, finished or still to
 * deliver, alone; and a delivered logout's outcome keys, their names and
 * their 7 days (docs/redis-keys.md). On Redis and on the embedded store.
 */

import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { BACKCHANNEL_LOGOUT_EVENT, type BackchannelLogoutEvent } from '../../src/events.ts';
import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, forms } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { bracket, redisClock } from '../helpers/clock.ts';
import { logTo, type LogLine } from '../helpers/log.ts';
import { until } from '../helpers/poll.ts';
import { keysNaming } from '../helpers/keys-naming.ts';
import { discover, lettersSettled, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const WEEK_MS = 7 * 24 * 60 * 60_000;

for (const embedded of [false, true]) describe(`a deleted person's back-channel logouts beside everyone else's (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;
  // Never answers 2xx.
  let down: BackchannelReceiver;
  // Answers what `answer` says at the time.
  let flaky: BackchannelReceiver;
  let answer = 200;
  let ok: BackchannelReceiver;
  const lines: LogLine[] = [];
  const events: BackchannelLogoutEvent[] = [];
  const configs: Record<string, oidc.Configuration> = {};
  const sites = () => [
    siteClient('era-down', { client_name: 'Down Site', backchannel_logout_uri: down.url }),
    siteClient('era-flaky', { client_name: 'Flaky Site', backchannel_logout_uri: flaky.url }),
    siteClient('era-ok', { client_name: 'Good Site', backchannel_logout_uri: ok.url }),
  ];
  const eventsOf = (clientId: string) => events.filter((e) => e.clientId === clientId);
  const idOf = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;
  /** The person's finished logout jobs (BullMQ, kept a day): none on the embedded store, which keeps nothing finished. */
  const jobsNaming = async (accountId: string) => (await keysNaming(h, [accountId]))
    .map((key) => key.slice(h.prefix.length)).filter((key) => /^\{logouts\}:logouts:[\w-]+$/.test(key) && !/:(meta|id|events|completed|failed|delayed|wait|active|marker|stalled-check|limiter|prioritized|paused|pc)$/.test(key));
  const signedOutPage = async (agent: Agent) => (await agent.get(`${h.issuer}/session/end/success`)).body;

  before(async () => {
    down = await startReceiver({ statuses: () => 503 });
    flaky = await startReceiver({ statuses: () => answer });
    ok = await startReceiver();
    h = await startHarness(`bcl-erased-${embedded ? 'mem' : 'redis'}`, {
      embedded,
      clients: sites(),
      logger: logTo(lines),
      allowPrivateFetchHosts: ['127.0.0.1'],
      // Tries 1 s and 3 s after the first: a logout waiting in the queue stays there through a deleteAccount on a busy machine.
      plugin: { backchannelLogout: { attempts: 3, backoffMs: 1000, giveUpAfterMs: 60_000 } },
    });
    h.reference.plugin.on(BACKCHANNEL_LOGOUT_EVENT, (event) => events.push(event));
    for (const site of sites()) configs[site.client_id] = await discover(h, site);
  });
  after(async () => {
    await h?.close();
    await down?.close();
    await flaky?.close();
    await ok?.close();
  });

  async function signOut(agent: Agent) {
    const page = await agent.get(`${h.issuer}/session/end`);
    expect(page.status).to.equal(200);
    const done = await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    return done;
  }

  it('a deleted person\'s logout the site never takes: tried again, given up after the attempts with one warning, nothing recorded and no one told', async () => {
    const email = `era-down-${embedded ? 'm' : 'r'}@example.com`;
    await signIn(h, configs['era-down']!, new Agent(), email);
    const accountId = await idOf(email);
    const lettersBefore = h.smtp.letters.length;

    await h.reference.deleteAccount(accountId);
    expect(down.requests.map((r) => r.status)).to.deep.equal([503]);
    await until('given up, or a third outcome', () => eventsOf('era-down').length >= 3 || eventsOf('era-down').some((e) => e.outcome === 'failed'), 20_000);
    const reason = eventsOf('era-down')[0]!.reason!;
    expect(reason).to.be.a('string').and.include('503');
    expect(eventsOf('era-down')).to.deep.equal([
      { clientId: 'era-down', outcome: 'retry', attempt: 1, reason },
      { clientId: 'era-down', outcome: 'retry', attempt: 2, reason },
      { clientId: 'era-down', outcome: 'failed', attempt: 3, reason },
    ]);
    expect(lines.filter((l) => l.message.includes('deleted person'))).to.deep.equal([
      { level: 'warn', message: 'back-channel logout of a deleted person given up: the site could not be reached', fields: { clientId: 'era-down', attempt: 3, reason } },
    ]);
    // No letter, no inbox entry, no outcome: no key names the person but the finished job (Redis keeps it a day).
    await lettersSettled(h);
    expect(h.smtp.letters.slice(lettersBefore).map((l) => l.subject)).to.deep.equal([]);
    expect(await h.reference.plugin.inbox.page(accountId)).to.deep.include({ items: [] });
    expect((await keysNaming(h, [accountId])).map((key) => key.slice(h.prefix.length))).to.deep.equal(await jobsNaming(accountId));
    expect(await jobsNaming(accountId)).to.have.length(embedded ? 0 : 1);
    await h.reference.plugin.deleteAccount(accountId);
    expect(await keysNaming(h, [accountId])).to.deep.equal([]);
    // Given up: three tries in all.
    expect(down.requests.map((r) => r.status)).to.deep.equal([503, 503, 503]);
    expect(eventsOf('era-down')).to.have.length(3);
  });

  it('deleting one person leaves another\'s logouts alone: one finished (its job kept), one still to deliver (delivered and recorded as theirs)', async () => {
    const [gone, done, waiting] = ['gone', 'done', 'waiting'].map((who) => `era-${who}-${embedded ? 'm' : 'r'}@example.com`) as [string, string, string];
    const agents = { gone: new Agent(), done: new Agent(), waiting: new Agent() };
    const subs = {
      gone: (await signIn(h, configs['era-flaky']!, agents.gone, gone)).tokens.claims()!.sub,
      done: (await signIn(h, configs['era-flaky']!, agents.done, done)).tokens.claims()!.sub,
      waiting: (await signIn(h, configs['era-flaky']!, agents.waiting, waiting)).tokens.claims()!.sub,
    };
    const goneId = await idOf(gone);
    const pendingLine = escapeHtml(t('en', 'logouts.pending', { site: 'Flaky Site' }));
    const signedOutLine = escapeHtml(t('en', 'logouts.signed_out', { site: 'Flaky Site' }));
    const sent = () => eventsOf('era-flaky').filter((e) => e.outcome === 'sent').length;

    // One person's logout finished through the queue: the first try failed, the queue's went through.
    answer = 503;
    expect((await signOut(agents.done)).body).to.include(pendingLine);
    answer = 200;
    await until('the first logout delivered', () => sent() === 1);
    if (h.redis) await until('its job finished', async () => { const c = (await h.reference.plugin.queues()).logouts; return c.waiting + c.active + c.delayed === 0; });
    // Another's waits in the queue, and the person deleted has one too.
    answer = 503;
    expect((await signOut(agents.waiting)).body).to.include(pendingLine);
    await h.reference.deleteAccount(goneId);
    // The first person's two tries; then the waiting one's first and the deleted one's (the waiting one's second, 1 s on, may come first on a busy machine: 503 too).
    const statuses = flaky.requests.map((r) => r.status);
    expect(statuses.slice(0, 2)).to.deep.equal([503, 200]);
    expect(statuses.slice(2)).to.have.length.within(2, 3).and.satisfy((rest: number[]) => rest.every((s) => s === 503));
    answer = 200;

    await until('both delivered', () => sent() === 3);
    const tokenSubs = await Promise.all(flaky.accepted.map(async (token) => (await flaky.verify(token, h.issuer, 'era-flaky')).sub));
    expect(tokenSubs.slice(0, 1)).to.deep.equal([subs.done]);
    expect(tokenSubs.slice(1).sort()).to.deep.equal([subs.waiting, subs.gone].sort());
    // The one still to deliver is recorded as that person's: their signed-out page says so.
    expect(await signedOutPage(agents.waiting)).to.include(signedOutLine).and.not.include(pendingLine);
    expect(await signedOutPage(agents.done)).to.include(signedOutLine);
    // The finished jobs of the others stay (a day); the deleted person's goes with a second call.
    if (h.redis) await until('the jobs finished', async () => { const c = (await h.reference.plugin.queues()).logouts; return c.waiting + c.active + c.delayed === 0; });
    const expected = embedded ? 0 : 1;
    expect((await jobsNaming(await idOf(done))).length, 'the finished logout of the one signed out before').to.equal(expected);
    expect((await jobsNaming(await idOf(waiting))).length, 'the one delivered after the deletion').to.equal(expected);
    expect((await jobsNaming(goneId)).length, 'the deleted person\'s, delivered').to.equal(expected);
    await h.reference.plugin.deleteAccount(goneId);
    expect(await keysNaming(h, [goneId])).to.deep.equal([]);
    expect((await jobsNaming(await idOf(done))).length).to.equal(expected);
    expect((await jobsNaming(await idOf(waiting))).length).to.equal(expected);
  });

  if (!embedded) it('a delivered logout\'s outcome keys: the person\'s and the sign-out\'s, as documented, each kept 7 days from its write', async () => {
    const email = 'era-keys@example.com';
    const agent = new Agent();
    await signIn(h, configs['era-ok']!, agent, email);
    const accountId = await idOf(email);
    const clock = redisClock(h.redis!);
    const act = await bracket(clock, () => signOut(agent));
    expect(act.value.body).to.include(escapeHtml(t('en', 'logouts.signed_out', { site: 'Good Site' })));
    const signoutId = agent.cookies.get(new URL(h.issuer).host)!.get('osn.signout')!;
    expect(signoutId).to.match(/^[\w-]{16,64}$/);
    for (const key of [`${h.prefix}account:{${accountId}}:logouts`, `${h.prefix}signout:{${signoutId}}:logouts`]) {
      const outcomes = Object.values(await h.redis!.hgetall(key)).map((v) => JSON.parse(v) as { clientId: string; state: string; at: number });
      expect(outcomes.map(({ clientId, state }) => ({ clientId, state })), key).to.deep.equal([{ clientId: 'era-ok', state: 'signed_out' }]);
      for (const kept of [key, `${key}:at`]) {
        // Written (PEXPIRE by Redis' clock) within [act.before, act.after]; read within [pttl.before, pttl.after].
        const pttl = await bracket(clock, () => h.redis!.pttl(kept));
        expect(pttl.value, kept).to.be.within(act.before + WEEK_MS - pttl.after, act.after + WEEK_MS - pttl.before);
      }
    }
  });
});
