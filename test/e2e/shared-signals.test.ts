/**
 * The Shared Signals transmitter end to end: a receiver written here with
 * jose reads discovery, gets an access token by client credentials, creates
 * a push stream to its own endpoint, verifies it, and then receives one SET
 * for each loss of access and credential change, each checked by every claim
 * rule; the same by poll with acknowledgements.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';

import { Agent, forms } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { lossOfAccessCalls } from '../helpers/loss-of-access.ts';
import { setUp } from '../helpers/set-up.ts';
import { receiverToken, ssfCall, startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';
const ssfScopes = 'openid email offline_access ssf.manage ssf.read';
const receiverSite = (id: string, extra: Partial<ClientMetadata> = {}) => siteClient(id, {
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: ssfScopes, ...extra,
});

// On Redis and on the embedded store (its scripts' twins and the in-process queue).
for (const embedded of [false, true]) describe(`Shared Signals transmitter (${embedded ? 'embedded store' : 'Redis'})`, () => {
  let h: Harness;
  let receiver: SsfReceiver;
  let metadata: SsfMetadata;
  let pushSite: oidc.Configuration;
  let pollSite: oidc.Configuration;
  let streamId: string;
  let pollStreamId: string;
  const pushClient = receiverSite('ssf-push');
  // A pairwise site that polls: its SETs name the person by its own pairwise subject.
  const pollClient = receiverSite('ssf-poll', { subject_type: 'pairwise' });
  const people = ['ssf1', 'ssf2', 'ssf3', 'ssf4', 'ssf5', 'ssf6', 'ssf7', 'ssf8'].map((name) => `${name}@acme.example`);

  setUp(async () => {
    receiver = await startSsfReceiver();
    h = await startHarness('ssf', {
      embedded,
      clients: [pushClient, pollClient],
      allowPrivateFetchHosts: ['127.0.0.1'],
      organizations: [{ id: 'acme', name: 'Acme', admins: ['boss@acme.example'], members: people, clients: ['ssf-push'] }],
    });
    [pushSite, pollSite] = await Promise.all([discover(h, pushClient), discover(h, pollClient)]);
    return { async close() { await h.close(); await receiver.close(); } };
  });
  const { api, accountId } = lossOfAccessCalls(() => h);
  const settled = async () => {
    for (let i = 0; i < 200 && (await h.reference.plugin.letters.pending() + await ssfPending()) > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
  };
  const ssfPending = () => h.reference.plugin.sharedSignals.pending();
  /** The SETs pushed after the first `from`, verified, in order. */
  const pushedSince = async (from: number, count: number) => {
    const all = await receiver.received(from + count);
    return Promise.all(all.slice(from).map((p) => verifySet(p.set, metadata, 'ssf-push')));
  };
  const signOut = async (agent: Agent) => {
    const page = await agent.get(`${h.issuer}/session/end`);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
  };

  const token = receiverToken;
  const call = (method: string, path: string, bearer: string | undefined, body?: unknown) => ssfCall(h.issuer, method, path, bearer, body);

  it('publishes its metadata at /.well-known/ssf-configuration', async () => {
    const res = await call('GET', '/.well-known/ssf-configuration', undefined);
    expect(res.status).to.equal(200);
    metadata = res.body as SsfMetadata;
    expect(metadata).to.deep.equal({
      spec_version: '1_0',
      issuer: h.issuer,
      jwks_uri: `${h.issuer}/jwks`,
      configuration_endpoint: `${h.issuer}/ssf/stream`,
      status_endpoint: `${h.issuer}/ssf/status`,
      verification_endpoint: `${h.issuer}/ssf/verify`,
      delivery_methods_supported: ['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'],
      authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
      default_subjects: 'ALL',
    });
  });

  it('creates a push stream, verifies it, and pushes a session-revoked SET when the person signs out', async () => {
    const manage = await token(pushSite, 'ssf.manage');
    const created = await call('POST', '/ssf/stream', manage, {
      events_requested: [`${CAEP}/session-revoked`, `${CAEP}/credential-change`, 'https://example.com/unknown'],
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url },
      description: 'test receiver',
    });
    expect(created.status).to.equal(201);
    streamId = created.body!.stream_id as string;
    expect(created.body).to.deep.include({
      iss: h.issuer, aud: 'ssf-push',
      events_requested: [`${CAEP}/session-revoked`, `${CAEP}/credential-change`, 'https://example.com/unknown'],
      events_delivered: [`${CAEP}/session-revoked`, `${CAEP}/credential-change`],
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url },
      description: 'test receiver', min_verification_interval: 30,
    });

    expect((await call('POST', '/ssf/verify', manage, { stream_id: streamId, state: 'st-1' })).status).to.equal(204);
    const [verification] = await receiver.received(1);
    expect(verification!.contentType).to.equal('application/secevent+jwt');
    expect(verification!.authorization).to.equal(undefined);
    const checked = await verifySet(verification!.set, metadata, 'ssf-push');
    expect(checked.type).to.equal(`${SSF}/verification`);
    expect(checked.event).to.deep.equal({ state: 'st-1' });
    expect(checked.payload.sub_id).to.deep.equal({ format: 'opaque', id: streamId });

    const agent = new Agent();
    const { tokens } = await signIn(h, pushSite, agent, people[0]!, { scope: 'openid email' });
    await signOut(agent);
    const [, revoked] = await receiver.received(2);
    const set = await verifySet(revoked!.set, metadata, 'ssf-push');
    expect(set.type).to.equal(`${CAEP}/session-revoked`);
    expect(set.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: tokens.claims()!.sub });
    expect(set.payload.txn).to.be.a('string');
    expect(set.event).to.deep.include({ initiating_entity: 'user', reason_admin: { en: 'The person signed out of the service.' }, reason_user: { en: 'You signed out.' } });
    expect(set.event.event_timestamp).to.be.a('number');
    expect(receiver.pushed).to.have.length(2);
  });

  it('pushes a passkey added, Block site and an organization removal once each, only to a stream that asked for them', async () => {
    const manage = await token(pushSite, 'ssf.manage');
    const own = 'urn:oidc-signout-notify:secevent:event-type';
    const patched = await call('PATCH', '/ssf/stream', manage, {
      stream_id: streamId,
      events_requested: [`${CAEP}/session-revoked`, `${CAEP}/credential-change`, `${CAEP}/token-claims-change`, `${own}:site-blocked`, `${own}:access-removed`],
    });
    expect(patched.status).to.equal(200);
    expect(patched.body!.events_delivered).to.deep.equal([`${CAEP}/session-revoked`, `${CAEP}/credential-change`, `${CAEP}/token-claims-change`, `${own}:site-blocked`, `${own}:access-removed`]);
    expect(patched.body!.delivery).to.deep.equal({ method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url });

    const from = receiver.pushed.length;
    const agent = new Agent();
    const { tokens } = await signIn(h, pushSite, agent, people[1]!);
    const sub = tokens.claims()!.sub;
    const id = await accountId(people[1]!);
    // The reference provider's console makes this call when a passkey is added (examples/reference/console-ways.ts).
    await h.reference.plugin.sharedSignals.credentialChange(id, { change: 'passkey_added', friendlyName: 'Laptop' });
    const [passkey] = await pushedSince(from, 1);
    expect(passkey!.type).to.equal(`${CAEP}/credential-change`);
    expect(passkey!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub });
    expect(passkey!.event).to.deep.include({
      credential_type: 'fido2-platform', change_type: 'create', friendly_name: 'Laptop', initiating_entity: 'user',
      reason_admin: { en: 'A passkey was added to the account.' }, reason_user: { en: 'You added a passkey.' },
    });

    expect((await api(agent, 'POST', '/sites/ssf-push/block')).status).to.equal(204);
    const [, blocked] = await pushedSince(from, 2);
    expect(blocked!.type).to.equal(`${own}:site-blocked`);
    expect(blocked!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub });
    expect(blocked!.event).to.deep.include({ initiating_entity: 'user', reason_user: { en: 'You blocked this site.' } });
    expect(blocked!.payload.txn).to.not.equal(passkey!.payload.txn);

    const member = new Agent();
    const signedIn = await signIn(h, pushSite, member, people[2]!);
    expect(await h.reference.plugin.removeMember('acme', await accountId(people[2]!))).to.equal('removed');
    const [, , removed] = await pushedSince(from, 3);
    expect(removed!.type).to.equal(`${CAEP}/token-claims-change`);
    expect(removed!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: signedIn.tokens.claims()!.sub });
    expect(removed!.event).to.deep.include({ initiating_entity: 'admin', claims: { org_id: 'acme', org_member: false }, reason_user: { en: 'An organization removed you as a member.' } });

    // A person who never signed in to the site: it hears nothing of them.
    const stranger = await accountId(people[3]!).catch(() => undefined);
    if (stranger) await h.reference.plugin.sharedSignals.accountDisabled(stranger);
    await settled();
    expect(receiver.pushed).to.have.length(from + 3);
    expect(new Set(receiver.pushed.map((p) => decodeJwt(p.set).jti)).size).to.equal(from + 3);
  });

  const poll = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/ssf/poll', await token(pollSite, 'ssf.read'), body);
    expect(res.status).to.equal(200);
    return res.body as { sets: Record<string, string>; moreAvailable: boolean };
  };

  it('by poll: verification, then one sign-out of two sites, each with a txn of its own, in the pairwise subject and the person\'s language; acks remove', async () => {
    const manage = await token(pollSite, 'ssf.manage');
    const created = await call('POST', '/ssf/stream', manage, { events_requested: [`${CAEP}/session-revoked`], delivery: { method: 'urn:ietf:rfc:8936' } });
    expect(created.status).to.equal(201);
    pollStreamId = created.body!.stream_id as string;
    expect(created.body!.delivery).to.deep.equal({ method: 'urn:ietf:rfc:8936', endpoint_url: `${h.issuer}/ssf/poll` });
    expect((await call('POST', '/ssf/verify', manage, { stream_id: pollStreamId, state: 'poll-state' })).status).to.equal(204);
    await settled();
    const first = await poll({ maxEvents: 10, returnImmediately: true });
    expect(first.moreAvailable).to.equal(false);
    const [[verificationJti, verification]] = Object.entries(first.sets) as [[string, string]];
    const checked = await verifySet(verification, metadata, 'ssf-poll');
    expect([checked.payload.jti, checked.type, checked.event]).to.deep.equal([verificationJti, `${SSF}/verification`, { state: 'poll-state' }]);
    expect(await poll({ ack: [verificationJti], maxEvents: 10, returnImmediately: true })).to.deep.equal({ sets: {}, moreAvailable: false });

    // One person signed in to both sites, reading German: one sign-out tells both, each with a txn of its own (no key to join on).
    const agent = new Agent();
    const atPush = await signIn(h, pushSite, agent, people[4]!);
    const atPoll = await signIn(h, pollSite, agent, people[4]!);
    await h.reference.plugin.preferences.setLocale(await accountId(people[4]!), 'de');
    const from = receiver.pushed.length;
    await signOut(agent);
    const [pushed] = await pushedSince(from, 1);
    await settled();
    const { sets } = await poll({ maxEvents: 1, returnImmediately: true });
    expect(Object.keys(sets)).to.have.length(1);
    const polled = await verifySet(Object.values(sets)[0]!, metadata, 'ssf-poll');
    expect(polled.type).to.equal(`${CAEP}/session-revoked`);
    expect(polled.payload.txn).to.be.a('string').and.match(/^[\w-]{22}$/);
    expect(pushed!.payload.txn).to.be.a('string').and.match(/^[\w-]{22}$/);
    expect(polled.payload.txn).to.not.equal(pushed!.payload.txn);
    const pairwise = atPoll.tokens.claims()!.sub;
    expect(pairwise).to.not.equal(atPush.tokens.claims()!.sub);
    expect(polled.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: pairwise });
    expect(pushed!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: atPush.tokens.claims()!.sub });
    expect(polled.event).to.deep.include({
      reason_admin: { en: 'The person signed out of the service.', de: 'Die Person hat sich beim Dienst abgemeldet.' },
      reason_user: { en: 'You signed out.', de: 'Sie haben sich abgemeldet.' },
    });
    // An error report acknowledges too (RFC 8936 section 2.4.2).
    expect(await poll({ setErrs: { [polled.payload.jti!]: { err: 'invalid_key', description: 'test' } }, maxEvents: 10 })).to.deep.equal({ sets: {}, moreAvailable: false });
  });

  it('holds events while paused and delivers them on enable; drops them while disabled', async () => {
    const manage = await token(pushSite, 'ssf.manage');
    const read = await token(pushSite, 'ssf.read');
    const agent = new Agent();
    await signIn(h, pushSite, agent, people[5]!);
    const id = await accountId(people[5]!);
    await settled();
    const from = receiver.pushed.length;
    const paused = await call('POST', '/ssf/status', manage, { stream_id: streamId, status: 'paused', reason: 'maintenance' });
    expect([paused.status, paused.body]).to.deep.equal([200, { stream_id: streamId, status: 'paused', reason: 'maintenance' }]);
    expect((await call('GET', `/ssf/status?stream_id=${streamId}`, read)).body).to.deep.equal({ stream_id: streamId, status: 'paused', reason: 'maintenance' });
    await h.reference.plugin.sharedSignals.credentialChange(id, { change: 'passkey_removed' });
    await settled();
    expect(receiver.pushed).to.have.length(from);
    expect((await call('POST', '/ssf/status', manage, { stream_id: streamId, status: 'enabled' })).body).to.deep.equal({ stream_id: streamId, status: 'enabled' });
    const [held] = await pushedSince(from, 1);
    expect(held!.type).to.equal(`${CAEP}/credential-change`);
    expect(held!.event).to.deep.include({ change_type: 'delete' });

    expect((await call('POST', '/ssf/status', manage, { stream_id: streamId, status: 'disabled' })).status).to.equal(200);
    await h.reference.plugin.sharedSignals.credentialChange(id, { change: 'passkey_added' });
    await settled();
    expect((await call('POST', '/ssf/status', manage, { stream_id: streamId, status: 'enabled' })).status).to.equal(200);
    await settled();
    expect(receiver.pushed).to.have.length(from + 1);
  });
  it('plugin.deleteAccount while the person\'s causes wait for the worker: theirs go, their account-purged stays, another person\'s stays', async () => {
    const [gone, stays] = [people[6]!, people[7]!];
    const { tokens: goneTokens } = await signIn(h, pushSite, new Agent(), gone);
    const { tokens: staysTokens } = await signIn(h, pushSite, new Agent(), stays);
    const [goneId, staysId] = [await accountId(gone), await accountId(stays)];
    const risc = 'https://schemas.openid.net/secevent/risc/event-type/account-purged';
    const asked = await call('PATCH', '/ssf/stream', await token(pushSite, 'ssf.manage'), { stream_id: streamId, events_requested: [`${CAEP}/credential-change`, risc] });
    expect(asked.status).to.equal(200);
    await settled();
    const from = receiver.pushed.length;
    const { plugin } = h.reference;
    await plugin.stopLetterWorker();
    await plugin.sharedSignals.credentialChange(goneId, { change: 'passkey_added' });
    await plugin.sharedSignals.credentialChange(staysId, { change: 'passkey_added' });
    expect(await ssfPending()).to.equal(2);
    await plugin.deleteAccount(goneId);
    // The gone person's cause is taken; their account-purged (fanned out from what was read before) and the other's cause wait.
    expect(await ssfPending()).to.equal(2);
    plugin.startLetterWorker();
    const sets = await pushedSince(from, 2);
    await settled();
    expect(receiver.pushed).to.have.length(from + 2);
    expect(sets.map((set) => [set.type, set.payload.sub_id]).sort()).to.deep.equal([
      [`${CAEP}/credential-change`, { format: 'iss_sub', iss: h.issuer, sub: staysTokens.claims()!.sub }],
      [risc, { format: 'iss_sub', iss: h.issuer, sub: goneTokens.claims()!.sub }],
    ]);
  });
});
