/**
 * The plugin's defaults as a host gets them (README "Options"), read off the
 * Redis keys they govern (docs/redis-keys.md "Redis keys" after real requests: record
 * lifetimes with the clock tolerance added, the grant tombstone's minimum,
 * inbox retention, rate windows and the Idempotency-Key's answer.
 */
import { expect } from 'chai';

import { Agent } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { adapterKeys } from '../../src/index.ts';

const site = siteClient('defaults-site', { client_uri: 'https://shop.example' });

const SECOND = 1000;
const DAY = 24 * 60 * 60 * SECOND;

describe('the defaults a host gets (record lifetimes, tombstones, inbox, rate windows, Idempotency-Key)', () => {
  let h: Harness;
  before(async () => { h = await startHarness('defaults', { clients: [site] }); });
  after(() => h.close());

  const pttl = (key: string) => h.reference.plugin.store.pttl(key);
  /** The key's remaining lifetime is `expected` ms, less the few seconds the test itself took. */
  async function lives(key: string, expected: number): Promise<void> {
    const left = await pttl(key);
    expect(left, key).to.be.within(expected - 10 * SECOND, expected);
  }

  it('keeps a token for its lifetime plus the 15 s clock tolerance', async () => {
    const { tokens } = await signIn(h, await discover(h, site), new Agent(), 'ttl@example.com');
    const keys = adapterKeys(h.prefix);
    // The reference provider's lifetimes: access token 1 h, refresh token 14 days.
    await lives(keys.record('AccessToken', tokens.access_token), (60 * 60 + 15) * SECOND);
    await lives(keys.record('RefreshToken', tokens.refresh_token!), 14 * DAY + 15 * SECOND);
  });

  it('gives a record saved without a lifetime the 14-day default (plus the tolerance)', async () => {
    const clients = h.reference.plugin.adapter.factory('Client');
    await clients.upsert('registered-later', { client_id: 'registered-later' } as never, undefined as never);
    await lives(adapterKeys(h.prefix).record('Client', 'registered-later'), 14 * DAY + 15 * SECOND);
  });

  it('keeps a revoked grant\'s tombstone at least 75 s (the tolerance plus 60 s) when nothing of the grant lives longer', async () => {
    await h.reference.plugin.adapter.revokeGrant('grant-with-nothing');
    const left = await pttl(adapterKeys(h.prefix).grantTombstone('grant-with-nothing'));
    expect(left).to.be.within(70 * SECOND, 75 * SECOND);
  });

  it('keeps the inbox 180 days after the last message, counts a person 1 h and a site 60 s, and keeps an Idempotency-Key\'s answer 24 h', async () => {
    const { tokens } = await signIn(h, await discover(h, site), new Agent(), 'inbox-ttl@example.com');
    const accountId = (await h.reference.accounts.findByEmail('inbox-ttl@example.com'))!.accountId;
    const res = await documentedFetch(`${h.issuer}/api/notify`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`,
        'content-type': 'application/json',
        'idempotency-key': 'defaults-1',
      },
      body: JSON.stringify({ sub: tokens.claims()!.sub, category: 'product', title: 'Kept', body: 'How long?' }),
    });
    expect(res.status).to.equal(202);
    const p = h.prefix;
    for (const key of [`${p}account:{${accountId}}:inbox`, `${p}account:{${accountId}}:inbox:entries`, `${p}account:{${accountId}}:inbox:unread`]) {
      await lives(key, 180 * DAY);
    }
    await lives(`${p}account:{${accountId}}:notify-rate:${site.client_id}`, 60 * 60 * SECOND);
    await lives(`${p}site:{${site.client_id}}:notify-rate`, 60 * SECOND);
    const idempotency = [];
    for await (const key of h.reference.plugin.store.scan(`site:{${site.client_id}}:idempotency:*`)) idempotency.push(key);
    expect(idempotency).to.have.length(1);
    await lives(idempotency[0]!, DAY);
    expect(JSON.parse((await h.reference.plugin.store.get(idempotency[0]!))!)).to.deep.equal({ inApp: true, email: false, skipped: null });
  });

  it('leaves no index of the grants of a person at a site once they are all revoked (Block site)', async () => {
    await signIn(h, await discover(h, site), new Agent(), 'index@example.com');
    const accountId = (await h.reference.accounts.findByEmail('index@example.com'))!.accountId;
    const index = adapterKeys(h.prefix).accountGrants(accountId, site.client_id);
    // PTTL -2: no such key.
    expect(await pttl(index)).to.be.above(0);
    expect(await h.reference.plugin.blockSite(accountId, site.client_id)).to.equal('blocked');
    expect(await pttl(index)).to.equal(-2);
  });
});
