/**
 * Shared Signals as the specifications say, where receivers differ: PUT and
 * PATCH answer exactly what a read then returns (SSF 1.0 sections 8.1.1.3
 * and 8.1.1.4: a PUT's missing Receiver-Supplied member is deleted); members
 * the transmitter does not know are ignored, neither kept nor shown back; a
 * poll's maxEvents is an upper bound (RFC 8936 section 2.2), not a reason for
 * 400; the service's own event types are named by the package, not the
 * issuer, and go only to streams that asked for them, by the name they
 * asked by. And what a receiver can do to the transmitter: report hundreds
 * of errors in one poll (one log line), poll in a loop (429 with Retry-After).
 */
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { receiverToken, ssfCall, startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const OWN = 'urn:oidc-signout-notify:secevent:event-type';
const PUSH = 'urn:ietf:rfc:8935';
const POLL = 'urn:ietf:rfc:8936';
const receiverSite = (id: string) => siteClient(id, { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email ssf.manage ssf.read' });
const ids = ['ssf-io-config', 'ssf-io-fields', 'ssf-io-urn', 'ssf-io-legacy', 'ssf-io-default', 'ssf-io-poll', 'ssf-io-errs', 'ssf-io-rate'] as const;
type Id = typeof ids[number];

describe('Shared Signals interoperability', () => {
  let h: Harness;
  let receiver: SsfReceiver;
  let metadata: SsfMetadata;
  const sites = {} as Record<Id, oidc.Configuration>;
  const lines: { message: string; fields?: Record<string, unknown> }[] = [];

  setUp(async () => {
    receiver = await startSsfReceiver();
    const log = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields });
    h = await startHarness('ssf-interop', { clients: ids.map(receiverSite), allowPrivateFetchHosts: ['127.0.0.1'], logger: { info: log, warn: log, error: log } });
    for (const id of ids) sites[id] = await discover(h, receiverSite(id));
    metadata = (await ssfCall(h.issuer, 'GET', '/.well-known/ssf-configuration', undefined)).body as SsfMetadata;
    return { async close() { await h.close(); await receiver.close(); } };
  });

  const call = async (id: Id, method: string, path: string, body?: unknown, scope = 'ssf.manage') => ssfCall(h.issuer, method, path, await receiverToken(sites[id], scope), body);
  const settled = async () => {
    for (const deadline = Date.now() + 20_000; (await h.reference.plugin.sharedSignals.pending()) > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect(await h.reference.plugin.sharedSignals.pending()).to.equal(0);
  };

  it('PUT and PATCH answer exactly what a read then returns; a PUT without description keeps none', async () => {
    const created = await call('ssf-io-config', 'POST', '/ssf/stream', { events_requested: [`${CAEP}/session-revoked`], delivery: { method: POLL }, description: 'first' });
    expect(created.status).to.equal(201);
    const streamId = created.body!.stream_id as string;
    const read = async () => (await call('ssf-io-config', 'GET', `/ssf/stream?stream_id=${streamId}`, undefined, 'ssf.read')).body;

    const replaced = await call('ssf-io-config', 'PUT', '/ssf/stream', { stream_id: streamId, events_requested: [`${CAEP}/credential-change`], delivery: { method: POLL } });
    expect(replaced.status).to.equal(200);
    expect(replaced.body).to.not.have.property('description');
    expect(await read()).to.deep.equal(replaced.body);

    const patched = await call('ssf-io-config', 'PATCH', '/ssf/stream', { stream_id: streamId, description: 'second' });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.deep.include({ description: 'second', events_requested: [`${CAEP}/credential-change`] });
    expect(await read()).to.deep.equal(patched.body);

    const again = await call('ssf-io-config', 'PUT', '/ssf/stream', { stream_id: streamId, delivery: { method: POLL }, description: 'third', min_verification_interval: 60 });
    expect(again.body).to.deep.include({ description: 'third', min_verification_interval: 60 });
    expect(await read()).to.deep.equal(again.body);
  });

  it('ignores members it does not know (format, as older receivers send): neither kept nor shown back', async () => {
    const asked = {
      format: 'iss_sub', colour: 'blue',
      events_requested: [`${CAEP}/session-revoked`],
      delivery: { method: PUSH, endpoint_url: receiver.url, format: 'jws', batch: true },
    };
    const created = await call('ssf-io-fields', 'POST', '/ssf/stream', asked);
    expect(created.status).to.equal(201);
    const streamId = created.body!.stream_id as string;
    for (const answer of [created.body!, (await call('ssf-io-fields', 'GET', `/ssf/stream?stream_id=${streamId}`, undefined, 'ssf.read')).body!]) {
      expect(answer).to.not.have.any.keys('format', 'colour');
      expect(answer.delivery).to.deep.equal({ method: PUSH, endpoint_url: receiver.url });
    }
    const patched = await call('ssf-io-fields', 'PATCH', '/ssf/stream', { stream_id: streamId, format: 'email', colour: 'red' });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.not.have.any.keys('format', 'colour');
    const kept = await (h.redis as Redis).hgetall(`${h.prefix}ssf:{ssf-io-fields}:stream`);
    expect(Object.keys(kept).sort()).to.deep.equal(['delivery', 'events_requested', 'min_verification_interval', 'status', 'stream_id']);
    expect(JSON.parse(kept.delivery!)).to.deep.equal({ method: PUSH, endpoint_url: receiver.url });
  });

  it('the service\'s own event types: named by the package, sent only to streams that ask, by the name they asked by', async () => {
    const legacy = `${h.issuer}/secevent/event-type/site-blocked`;
    expect(metadata.issuer).to.equal(h.issuer);
    // One stream asks by the new name, one by the old (as streams made before the rename hold it), one for nothing in particular.
    expect((await call('ssf-io-urn', 'POST', '/ssf/stream', { events_requested: [`${OWN}:site-blocked`], delivery: { method: PUSH, endpoint_url: receiver.url } })).status).to.equal(201);
    const legacyStream = await call('ssf-io-legacy', 'POST', '/ssf/stream', { events_requested: [legacy], delivery: { method: PUSH, endpoint_url: receiver.url, authorization_header: 'Bearer legacy' } });
    expect(legacyStream.body).to.deep.include({ events_requested: [legacy], events_delivered: [legacy] });
    expect(legacyStream.body!.events_supported).to.include(legacy).and.include(`${OWN}:site-blocked`);
    const byDefault = await call('ssf-io-default', 'POST', '/ssf/stream', { delivery: { method: PUSH, endpoint_url: receiver.url, authorization_header: 'Bearer default' } });
    expect(byDefault.body!.events_supported).to.not.include(legacy);
    expect(byDefault.body!.events_requested).to.not.include(`${OWN}:site-blocked`);

    const agent = new Agent();
    for (const id of ['ssf-io-urn', 'ssf-io-legacy', 'ssf-io-default'] as const) await signIn(h, sites[id], agent, 'own-events@example.com', { scope: 'openid email' });
    await settled();
    const from = receiver.pushed.length;
    for (const id of ['ssf-io-urn', 'ssf-io-legacy', 'ssf-io-default']) {
      const res = await agent.request('POST', `${h.issuer}/console/api/sites/${id}/block`, undefined, { accept: 'application/json', origin: h.issuer });
      expect(res.status).to.equal(204);
    }
    await settled();
    const pushed = await Promise.all(receiver.pushed.slice(from).map(async (p) => {
      const aud = p.authorization === 'Bearer legacy' ? 'ssf-io-legacy' : p.authorization === 'Bearer default' ? 'ssf-io-default' : 'ssf-io-urn';
      return [aud, (await verifySet(p.set, metadata, aud)).type];
    }));
    expect(pushed.sort()).to.deep.equal([['ssf-io-legacy', legacy], ['ssf-io-urn', `${OWN}:site-blocked`]]);
  });

  it('a poll asking more than the cap gets at most 100 SETs and moreAvailable, not 400', async () => {
    expect((await call('ssf-io-poll', 'POST', '/ssf/stream', { events_requested: [`${CAEP}/credential-change`], delivery: { method: POLL } })).status).to.equal(201);
    await signIn(h, sites['ssf-io-poll'], new Agent(), 'many-events@example.com', { scope: 'openid email' });
    const accountId = (await h.reference.accounts.findByEmail('many-events@example.com'))!.accountId;
    for (let i = 0; i < 101; i += 1) await h.reference.plugin.sharedSignals.credentialChange(accountId, { change: 'passkey_added' });
    await settled();
    const first = await call('ssf-io-poll', 'POST', '/ssf/poll', { maxEvents: 1000, returnImmediately: true }, 'ssf.read');
    expect(first.status).to.equal(200);
    expect([Object.keys(first.body!.sets as object).length, first.body!.moreAvailable]).to.deep.equal([100, true]);
    const second = await call('ssf-io-poll', 'POST', '/ssf/poll', { ack: Object.keys(first.body!.sets as object), maxEvents: 1000 }, 'ssf.read');
    expect([Object.keys(second.body!.sets as object).length, second.body!.moreAvailable]).to.deep.equal([1, false]);
  });

  it('a poll reporting 200 errors logs one line with their count by code, never the receiver\'s jtis or words', async () => {
    expect((await call('ssf-io-errs', 'POST', '/ssf/stream', { delivery: { method: POLL } })).status).to.equal(201);
    // Each code of the registry (RFC 8935 section 2.4, SSF's invalid_state) by its name; any other word as `other`.
    const codes = ['invalid_request', 'invalid_key', 'invalid_issuer', 'invalid_audience', 'authentication_failed', 'access_denied', 'invalid_state'];
    const setErrs = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`jti-${i}`, i % 8 < 7 ? { err: codes[i % 8]! } : { err: `x\nforged log line ${i}`, description: 'y'.repeat(40) }]));
    const from = lines.length;
    const res = await call('ssf-io-errs', 'POST', '/ssf/poll', { setErrs, maxEvents: 0 }, 'ssf.read');
    expect([res.status, res.body]).to.deep.equal([200, { sets: {}, moreAvailable: false }]);
    const logged = lines.slice(from).filter((l) => l.fields?.clientId === 'ssf-io-errs');
    expect(logged).to.deep.equal([{ message: 'security events refused by the receiver', fields: { clientId: 'ssf-io-errs', count: 200, codes: { ...Object.fromEntries(codes.map((code) => [code, 25])), other: 25 } } }]);
  });

  it('polls past 60 a minute are 429 rate_limited with Retry-After', async () => {
    expect((await call('ssf-io-rate', 'POST', '/ssf/stream', { delivery: { method: POLL } })).status).to.equal(201);
    const read = await receiverToken(sites['ssf-io-rate'], 'ssf.read');
    const statuses: number[] = [];
    for (let i = 0; i < 60; i += 1) statuses.push((await ssfCall(h.issuer, 'POST', '/ssf/poll', read, { maxEvents: 0 })).status);
    expect(new Set(statuses)).to.deep.equal(new Set([200]));
    const refused = await ssfCall(h.issuer, 'POST', '/ssf/poll', read, { maxEvents: 0 });
    expect([refused.status, refused.body]).to.deep.equal([429, { error: 'rate_limited', error_description: 'at most 60 polls every 60 seconds' }]);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    // Another site's polls are its own.
    expect((await call('ssf-io-errs', 'POST', '/ssf/poll', { maxEvents: 0 }, 'ssf.read')).status).to.equal(200);
  });
});
