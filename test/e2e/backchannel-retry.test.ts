/**
 * Back-channel logout that is retried and shown (docs/backchannel-logout.md):
 * a site whose endpoint answers 503 twice then 200 gets exactly one logout
 * token; a site that never answers ends as "could not be reached" on the
 * signed-out page, on the console and in a `site_unreachable` notice; a
 * repeated trigger sends nothing twice. On Redis, the embedded store, and on
 * the Cluster in the Cluster pass. What survives a crash:
 * backchannel-durable.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { BACKCHANNEL_LOGOUT_EVENT, type BackchannelLogoutEvent } from '../../src/events.ts';
import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, forms } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { TIMER_EARLY_MS } from '../helpers/clock.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { REDIS_CLUSTER } from '../helpers/redis.ts';
import { until } from '../helpers/poll.ts';

const SERVICE = 'Sign-in service';

/** A counter's value in the reference provider's metrics (docs/operations.md). */
async function counter(h: Harness, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await h.reference.operations.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric as { values?: { labels: Record<string, string | number>; value: number }[] } | undefined)?.values ?? [];
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
}

for (const embedded of [false, true]) describe(`back-channel logout, retried and shown, ${embedded ? 'on the embedded store (the in-process queue)' : REDIS_CLUSTER ? 'on the Redis Cluster' : 'on Redis'}`, () => {
  let h: Harness;
  let flaky: BackchannelReceiver;
  let down: BackchannelReceiver;
  let flakyConfig: oidc.Configuration;
  let downConfig: oidc.Configuration;
  const events: BackchannelLogoutEvent[] = [];
  // 503 to the first two requests, 200 from then on.
  const flakySite = () => siteClient('bcl-flaky', { client_name: 'Flaky Site', backchannel_logout_uri: flaky.url, backchannel_logout_session_required: true });
  const downSite = () => siteClient('bcl-down', { client_name: 'Down Site', client_uri: 'https://down.example/account', backchannel_logout_uri: down.url });

  before(async () => {
    flaky = await startReceiver({ statuses: (n) => (n < 2 ? 503 : 200) });
    down = await startReceiver({ statuses: () => 503 });
    h = await startHarness('bcl-retry', {
      embedded,
      clients: [flakySite(), downSite()],
      allowPrivateFetchHosts: ['127.0.0.1'],
      // The queue's tries 250 ms and 750 ms after the first: the signed-out page is shown before them.
      plugin: { backchannelLogout: { attempts: 3, backoffMs: 250, giveUpAfterMs: 60_000 } },
    });
    h.reference.plugin.on(BACKCHANNEL_LOGOUT_EVENT, (event) => events.push(event));
    flakyConfig = await discover(h, flakySite());
    downConfig = await discover(h, downSite());
  });
  after(async () => {
    await h.close();
    await flaky.close();
    await down.close();
  });

  async function signOut(agent: Agent) {
    const page = await agent.get(`${h.issuer}/session/end`);
    expect(page.status).to.equal(200);
    return agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
  }

  it('a site answering 503 twice then 200 gets exactly one logout token (verified against the JWKS); the signed-out page says pending, then "Signed out of"', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, flakyConfig, agent, 'bcl-flaky@example.com');
    const claims = tokens.claims()!;
    const done = await signOut(agent);
    expect(done.status).to.equal(200);
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    // The first try got 503: the page says the service keeps trying.
    expect(flaky.requests.map((r) => r.status)).to.deep.equal([503]);
    expect(done.body).to.include(escapeHtml(t('en', 'logouts.pending', { site: 'Flaky Site' })));

    await until('the third request', () => flaky.requests.length === 3);
    await until('the outcome recorded', async () => (await agent.get(`${h.issuer}/session/end/success`)).body.includes(escapeHtml(t('en', 'logouts.signed_out', { site: 'Flaky Site' }))));
    // Nothing after the 200 (a further try would come 1 s later).
    await sleep(1200);
    expect(flaky.requests.map((r) => r.status)).to.deep.equal([503, 503, 200]);
    // At the documented times (docs/backchannel-logout.md): backoffMs after the logout was queued (just before the first
    // try), then twice that after the second try failed: never sooner, late by at most 1 s on a loaded machine.
    const [first, second, third] = flaky.requests.map((r) => r.at) as [number, number, number];
    expect(second - first, 'the first wait').to.be.within(150, 1250);
    expect(third - second, 'the second wait: twice the first').to.be.within(500 - TIMER_EARLY_MS, 1500);
    expect(flaky.accepted).to.have.length(1);
    const payload = await flaky.verify(flaky.accepted[0]!, h.issuer, 'bcl-flaky');
    expect([payload.sub, payload.sid]).to.deep.equal([claims.sub, claims.sid]);
    expect(payload.events).to.deep.equal({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    // Each try is a token signed at send time (none is kept): three tokens, three jti.
    const jtis = await Promise.all(flaky.tokens.map(async (token) => (await flaky.verify(token, h.issuer, 'bcl-flaky')).jti));
    expect(new Set(jtis).size).to.equal(3);
    expect(events.filter((e) => e.clientId === 'bcl-flaky').map((e) => [e.outcome, e.attempt])).to.deep.equal([['retry', 1], ['retry', 2], ['sent', 3]]);
    // Metrics count per site: sent, retried.
    expect(await counter(h, 'osn_backchannel_logouts_total', { client: 'bcl-flaky', outcome: 'sent' })).to.equal(1);
    expect(await counter(h, 'osn_backchannel_logouts_total', { client: 'bcl-flaky', outcome: 'retry' })).to.equal(2);
    // No event names a token.
    expect(JSON.stringify(events)).to.not.include(flaky.tokens[0]!.slice(0, 40));
  });

  it('a site that never answers ends as "could not be reached" on the console, with its own address, and in a site_unreachable notice (inbox and letter)', async () => {
    const email = 'bcl-down@example.com';
    const agent = new Agent();
    await signIn(h, downConfig, agent, email);
    const id = (await h.reference.accounts.findByEmail(email))!.accountId;
    // Remove access (console): the site's access ends and it is told, through the queue.
    expect(await h.reference.plugin.removeAccess(id, 'bcl-down')).to.equal('removed');
    await until('three tries', () => down.requests.length === 3);
    const subject = t('en', 'notice.site_unreachable.subject', { serviceName: SERVICE, name: 'Down Site' });
    const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    expect(letter.text).to.include(t('en', 'notice.site_unreachable.title', { name: 'Down Site' }));
    expect(events.filter((e) => e.clientId === 'bcl-down').map((e) => [e.outcome, e.attempt])).to.deep.equal([['retry', 1], ['retry', 2], ['failed', 3]]);

    const inbox = await agent.request('GET', `${h.issuer}/console/api/inbox`, undefined, { accept: 'application/json' });
    expect(inbox.status).to.equal(200);
    const items = (JSON.parse(inbox.body) as { items: { notice?: string; clientId?: string }[] }).items;
    expect(items.filter((i) => i.notice === 'site_unreachable')).to.have.length(1);

    const page = await agent.get(`${h.issuer}/console`);
    expect(page.status).to.equal(200);
    expect(page.body).to.include(escapeHtml(t('en', 'logouts.unreachable', { site: 'Down Site' })));
    expect(page.body).to.include(`<a href="https://down.example/account">${escapeHtml(t('en', 'logouts.go', { site: 'Down Site' }))}</a>`);
    expect(await counter(h, 'osn_backchannel_logouts_total', { client: 'bcl-down', outcome: 'failed' })).to.equal(1);
    expect(await counter(h, 'osn_backchannel_logouts_total', { client: 'bcl-down', outcome: 'retry' })).to.equal(2);
    // Given up: no more tries.
    await sleep(500);
    expect(down.requests).to.have.length(3);
  });

  it('"Stay signed in": the asking site is signed out, and the page that says the person is still signed in says so', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, flakyConfig, agent, 'bcl-stay@example.com');
    const before = flaky.accepted.length;
    const page = await agent.get(`${h.issuer}/session/end?${new URLSearchParams({ client_id: 'bcl-flaky' })}`);
    expect(page.status).to.equal(200);
    const stayed = await agent.follow(await agent.submit(page, forms(page.body)[0]!));
    expect(stayed.status).to.equal(200);
    expect(stayed.body).to.include(escapeHtml(t('en', 'logouts.signed_out', { site: 'Flaky Site' })));
    expect(flaky.accepted.length - before).to.equal(1);
    expect((await flaky.verify(flaky.accepted.at(-1)!, h.issuer, 'bcl-flaky')).sid).to.equal(tokens.claims()!.sid);
  });

  it('a repeated trigger of the same sign-out sends nothing twice', async () => {
    const agent = new Agent();
    await signIn(h, flakyConfig, agent, 'bcl-again@example.com');
    const id = (await h.reference.accounts.findByEmail('bcl-again@example.com'))!.accountId;
    const before = flaky.requests.length;
    await h.reference.plugin.queueLogout(id, 'bcl-flaky', ['sid-x'], 'test-cause');
    await h.reference.plugin.queueLogout(id, 'bcl-flaky', ['sid-x'], 'test-cause');
    await sleep(500);
    expect(flaky.requests.length - before).to.equal(1);
    expect(flaky.requests.at(-1)!.status).to.equal(200);
  });
});
