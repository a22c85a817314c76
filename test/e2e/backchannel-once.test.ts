/**
 * Back-channel logout with `attempts: 1` (docs/backchannel-logout.md): the
 * try at the sign-out is the only one, so a site that does not answer 2xx is
 * "could not be reached" at once, on the signed-out page, to the host (a
 * `failed` event, a warning) and in a site_unreachable notice, and the queue
 * never tries it again. Beside it, the person's outcomes as the console's
 * data copy lists them: newest first. On Redis and on the embedded store.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { BACKCHANNEL_LOGOUT_EVENT, type BackchannelLogoutEvent } from '../../src/events.ts';
import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, forms } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { logTo, type LogLine } from '../helpers/log.ts';
import { until } from '../helpers/poll.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const SERVICE = 'Sign-in service';

for (const embedded of [false, true]) describe(`back-channel logout tried once (attempts: 1), ${embedded ? 'on the embedded store' : 'on Redis'}`, () => {
  let h: Harness;
  let down: BackchannelReceiver;
  let ok: BackchannelReceiver;
  const lines: LogLine[] = [];
  const events: BackchannelLogoutEvent[] = [];
  const configs: Record<string, oidc.Configuration> = {};
  const sites = () => [
    siteClient('one-down', { client_name: 'Down Site', backchannel_logout_uri: down.url }),
    siteClient('one-a', { client_name: 'Site A', backchannel_logout_uri: ok.url }),
    siteClient('one-z', { client_name: 'Site Z', backchannel_logout_uri: ok.url }),
  ];

  before(async () => {
    down = await startReceiver({ statuses: () => 503 });
    ok = await startReceiver();
    h = await startHarness(`bcl-once-${embedded ? 'mem' : 'redis'}`, {
      embedded,
      clients: sites(),
      logger: logTo(lines),
      allowPrivateFetchHosts: ['127.0.0.1'],
      // Were the queue to try, it would 250 ms after the sign-out.
      plugin: { backchannelLogout: { attempts: 1, backoffMs: 250, giveUpAfterMs: 60_000 } },
    });
    h.reference.plugin.on(BACKCHANNEL_LOGOUT_EVENT, (event) => events.push(event));
    for (const site of sites()) configs[site.client_id] = await discover(h, site);
  });
  after(async () => {
    await h?.close();
    await down?.close();
    await ok?.close();
  });

  it('a site answering 503 is "could not be reached" at once: the page says so, one failed event at attempt 1, one warning, a site_unreachable letter, and no second try', async () => {
    const email = `one-down-${embedded ? 'm' : 'r'}@example.com`;
    const agent = new Agent();
    await signIn(h, configs['one-down']!, agent, email);
    const page = await agent.get(`${h.issuer}/session/end`);
    const done = await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
    expect(done.body).to.include(escapeHtml(t('en', 'logouts.unreachable', { site: 'Down Site' })));
    expect(done.body).to.not.include(escapeHtml(t('en', 'logouts.pending', { site: 'Down Site' })));
    const reason = 'the site answered 503';
    expect(events.filter((e) => e.clientId === 'one-down')).to.deep.equal([{ clientId: 'one-down', outcome: 'failed', attempt: 1, reason }]);
    expect(lines.filter((l) => l.level === 'warn' && l.fields?.clientId === 'one-down')).to.deep.equal([
      { level: 'warn', message: 'back-channel logout given up: the site could not be reached', fields: { clientId: 'one-down', attempt: 1, reason } },
    ]);
    const subject = t('en', 'notice.site_unreachable.subject', { serviceName: SERVICE, name: 'Down Site' });
    await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    if (h.redis) expect((await h.reference.plugin.queues()).logouts).to.include({ waiting: 0, active: 0, delayed: 0, failed: 0 });
    // Nothing tried again (the queue's try would have come 250 ms after the sign-out).
    await sleep(750);
    expect(down.requests.map((r) => r.status)).to.deep.equal([503]);
    expect(events.filter((e) => e.clientId === 'one-down')).to.have.length(1);
  });

  it('the console\'s data copy lists the person\'s sign-outs at sites newest first', async () => {
    const email = `one-order-${embedded ? 'm' : 'r'}@example.com`;
    const agent = new Agent();
    await signIn(h, configs['one-a']!, agent, email);
    await signIn(h, configs['one-z']!, agent, email);
    const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
    // Site A's access ends first, Site Z's later (by the clock the outcomes are stamped with): Z is listed first, though A sorts first by name and was recorded first.
    expect(await h.reference.plugin.removeAccess(accountId, 'one-a')).to.equal('removed');
    const between = Date.now();
    await until('the clock moved on', () => Date.now() > between);
    expect(await h.reference.plugin.removeAccess(accountId, 'one-z')).to.equal('removed');

    const copy = await agent.request('GET', `${h.issuer}/console/api/export`, undefined, { accept: 'application/json' });
    expect(copy.status).to.equal(200);
    const logouts = (JSON.parse(copy.body) as { logouts: { clientId: string; state: string; at: string }[] }).logouts;
    expect(logouts.map(({ clientId, state }) => ({ clientId, state }))).to.deep.equal([
      { clientId: 'one-z', state: 'signed_out' },
      { clientId: 'one-a', state: 'signed_out' },
    ]);
    expect(Date.parse(logouts[0]!.at)).to.be.greaterThan(between);
    expect(Date.parse(logouts[1]!.at)).to.be.at.most(between);
  });
});
