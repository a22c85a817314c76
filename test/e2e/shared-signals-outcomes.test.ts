/**
 * Shared Signals gets what back-channel logout has (issue 34 item 6): an
 * event per SET try at each site with its outcome (SHARED_SIGNALS_EVENT), and
 * the reference provider's metric by site and outcome. A receiver answering
 * 503, 503, 202 gets one SET (the same, three times), retried at the
 * documented times (letters.backoffMs, then twice that); a poll stream's SET
 * is `kept`; a receiver's 400 is `refused`, not tried again. On Redis, the
 * embedded store, and the Cluster in the Cluster pass.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { SHARED_SIGNALS_EVENT, type SharedSignalsEvent } from '../../src/events.ts';
import { Agent } from '../helpers/agent.ts';
import { TIMER_EARLY_MS } from '../helpers/clock.ts';
import { lossOfAccessCalls } from '../helpers/loss-of-access.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { REDIS_CLUSTER } from '../helpers/redis.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const BACKOFF_MS = 200;
const receiverSite = (id: string): ClientMetadata => siteClient(id, {
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email offline_access ssf.manage ssf.read',
});

/** A counter's value in the reference provider's metrics (docs/operations.md). */
async function counter(h: Harness, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await h.reference.operations.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric as { values?: { labels: Record<string, string | number>; value: number }[] } | undefined)?.values ?? [];
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const embedded of [false, true]) describe(`Shared Signals outcomes: an event and a metric per site and try, ${embedded ? 'on the embedded store' : REDIS_CLUSTER ? 'on the Redis Cluster' : 'on Redis'}`, () => {
  let h: Harness;
  let flaky: SsfReceiver;
  let refusing: SsfReceiver;
  let metadata: SsfMetadata;
  const configs: Record<string, oidc.Configuration> = {};
  const events: SharedSignalsEvent[] = [];
  const sites = ['ssf-flaky', 'ssf-refusing', 'ssf-polled'];

  setUp(async () => {
    flaky = await startSsfReceiver('/ssf/push', (n) => (n < 2 ? 503 : 202));
    refusing = await startSsfReceiver('/ssf/push', () => 400);
    h = await startHarness(embedded ? 'ssf-outcomes-embedded' : 'ssf-outcomes', {
      embedded, clients: sites.map(receiverSite), allowPrivateFetchHosts: ['127.0.0.1'],
      plugin: { letters: { backoffMs: BACKOFF_MS, attempts: 3 } },
    });
    h.reference.plugin.on(SHARED_SIGNALS_EVENT, (event) => events.push(event));
    for (const id of sites) configs[id] = await discover(h, receiverSite(id));
    metadata = await (await documentedFetch(`${h.issuer}/.well-known/ssf-configuration`)).json() as SsfMetadata;
    const delivery: Record<string, Record<string, unknown>> = {
      'ssf-flaky': { method: 'urn:ietf:rfc:8935', endpoint_url: flaky.url },
      'ssf-refusing': { method: 'urn:ietf:rfc:8935', endpoint_url: refusing.url },
      'ssf-polled': { method: 'urn:ietf:rfc:8936' },
    };
    for (const id of sites) {
      const { access_token: manage } = await oidc.clientCredentialsGrant(configs[id]!, { scope: 'ssf.manage' });
      const res = await documentedFetch(`${h.issuer}/ssf/stream`, {
        method: 'POST', headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events_requested: [`${CAEP}/session-revoked`], delivery: delivery[id] }),
      });
      expect(res.status, id).to.equal(201);
    }
    return { async close() { await h.close(); await flaky.close(); await refusing.close(); } };
  });
  const { api } = lossOfAccessCalls(() => h);

  it('sign out everywhere: 503, 503, 202 is one SET at the documented times, retry twice then sent; kept for the poll; refused once', async () => {
    const agent = new Agent();
    for (const id of sites) await signIn(h, configs[id]!, agent, 'outcomes@example.com');
    expect((await api(agent, 'POST', '/sessions/end-all')).status).to.be.oneOf([200, 204]);
    const of = (clientId: string) => events.filter((e) => e.clientId === clientId).map((e) => [e.outcome, e.attempt, e.reason]);
    await until('three pushes and a refusal', () => flaky.pushed.length === 3 && of('ssf-refusing').length === 1 && of('ssf-polled').length === 1);
    await until('the third outcome', () => of('ssf-flaky').length === 3);

    expect(flaky.pushed.map((p) => p.status)).to.deep.equal([503, 503, 202]);
    // One SET, sent again as it was: the same jti each time.
    expect(new Set(flaky.pushed.map((p) => p.set)).size).to.equal(1);
    const set = await verifySet(flaky.pushed[0]!.set, metadata, 'ssf-flaky');
    expect([set.type, set.event.initiating_entity]).to.deep.equal([`${CAEP}/session-revoked`, 'user']);
    // Retried at the documented times: backoffMs after the first failure, twice that after the second (never sooner).
    const [first, second, third] = flaky.pushed.map((p) => p.at) as [number, number, number];
    expect(second - first, 'the first wait').to.be.within(BACKOFF_MS - TIMER_EARLY_MS, BACKOFF_MS + 1000);
    expect(third - second, 'the second wait: twice the first').to.be.within(2 * BACKOFF_MS - TIMER_EARLY_MS, 2 * BACKOFF_MS + 1000);

    expect(of('ssf-flaky')).to.deep.equal([['retry', 1, 'receiver answered 503'], ['retry', 2, 'receiver answered 503'], ['sent', 3, undefined]]);
    expect(of('ssf-polled')).to.deep.equal([['kept', 1, undefined]]);
    expect(of('ssf-refusing')).to.deep.equal([['refused', 1, 'refused: other']]);
    // Not tried again after the 400.
    await new Promise((r) => setTimeout(r, 3 * BACKOFF_MS));
    expect(refusing.pushed.map((p) => p.status)).to.deep.equal([400]);

    // The reference provider's metric, by site and outcome.
    const metric = (client: string, outcome: string) => counter(h, 'osn_shared_signals_total', { client, outcome });
    expect([await metric('ssf-flaky', 'retry'), await metric('ssf-flaky', 'sent'), await metric('ssf-polled', 'kept'), await metric('ssf-refusing', 'refused')])
      .to.deep.equal([2, 1, 1, 1]);
    // No event names a SET.
    expect(JSON.stringify(events)).to.not.include(flaky.pushed[0]!.set.slice(0, 40));
  });
});
