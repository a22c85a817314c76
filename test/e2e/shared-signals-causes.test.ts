/**
 * Each loss of access tells the site through Shared Signals: theft of a
 * refresh token, sign out everywhere from the console, Remove access, and a
 * deleted account (account-purged, whose sites and subjects are read before
 * the person's records go). Pushes carry the stream's authorization header;
 * a push to a private address needs allowPrivateFetchHosts.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { lossOfAccessCalls } from '../helpers/loss-of-access.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const receiverSite = (id: string): ClientMetadata => siteClient(id, {
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email offline_access ssf.manage ssf.read',
});

describe('Shared Signals: what each loss of access sends', () => {
  let h: Harness;
  let receiver: SsfReceiver;
  let metadata: SsfMetadata;
  let a: oidc.Configuration;
  let b: oidc.Configuration;

  setUp(async () => {
    receiver = await startSsfReceiver();
    h = await startHarness('ssf-causes', { clients: [receiverSite('ssf-a'), receiverSite('ssf-b')], allowPrivateFetchHosts: ['127.0.0.1'] });
    [a, b] = await Promise.all([discover(h, receiverSite('ssf-a')), discover(h, receiverSite('ssf-b'))]);
    metadata = await (await documentedFetch(`${h.issuer}/.well-known/ssf-configuration`)).json() as SsfMetadata;
    return { async close() { await h.close(); await receiver.close(); } };
  });
  const { api, accountId } = lossOfAccessCalls(() => h);
  const own = 'urn:oidc-signout-notify:secevent:event-type';
  const create = async (config: oidc.Configuration, delivery: Record<string, unknown>) => {
    const { access_token: manage } = await oidc.clientCredentialsGrant(config, { scope: 'ssf.manage' });
    const res = await documentedFetch(`${h.issuer}/ssf/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events_requested: [`${CAEP}/session-revoked`, `${RISC}/account-purged`, `${own}:access-removed`], delivery }),
    });
    return { status: res.status, body: await res.json() as unknown };
  };
  /** The SETs pushed after the first `from`, verified for their audience, in order. */
  const since = async (from: number, count: number) => {
    const all = (await receiver.received(from + count)).slice(from);
    return Promise.all(all.map(async (p) => ({ ...(await verifySet(p.set, metadata, p.authorization ? 'ssf-b' : 'ssf-a')), authorization: p.authorization })));
  };

  it('refuses a push to a private address or over http unless the host is allowed', async () => {
    expect(await create(a, { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://10.1.2.3/ssf' })).to.deep.equal({
      status: 400, body: { error: 'invalid_request', error_description: 'delivery.endpoint_url: a private address (allowed only for the hosts in allowPrivateFetchHosts)' },
    });
    expect(await create(a, { method: 'urn:ietf:rfc:8935', endpoint_url: 'http://receiver.example/ssf' })).to.deep.equal({
      status: 400, body: { error: 'invalid_request', error_description: 'delivery.endpoint_url: must be https' },
    });
    expect((await create(a, { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url })).status).to.equal(201);
    expect((await create(b, { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url, authorization_header: 'Bearer for-b-only' })).status).to.equal(201);
  });

  it('theft of a refresh token: session-revoked to that site, initiated by the system', async () => {
    const { tokens } = await signIn(h, a, new Agent(), 'theft@example.com', { scope: 'openid email offline_access' });
    // The successor used, the first presented again: a reuse (outside the reuse leeway's answer again).
    const second = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
    await oidc.refreshTokenGrant(a, second.refresh_token!);
    const from = receiver.pushed.length;
    expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
    const [set] = await since(from, 1);
    expect([set!.type, set!.payload.aud, set!.authorization]).to.deep.equal([`${CAEP}/session-revoked`, 'ssf-a', undefined]);
    expect(set!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: tokens.claims()!.sub });
    expect(set!.event).to.deep.include({ initiating_entity: 'system', reason_user: { en: 'Your sign-in was used by someone else, so it was ended.' } });
  });

  it('sign out everywhere: session-revoked to both sites, each with a txn of its own, the second with its authorization header', async () => {
    const agent = new Agent();
    await signIn(h, a, agent, 'everywhere@example.com');
    await signIn(h, b, agent, 'everywhere@example.com');
    const from = receiver.pushed.length;
    expect((await api(agent, 'POST', '/sessions/end-all')).status).to.be.oneOf([200, 204]);
    const sets = await since(from, 2);
    expect(sets.map((s) => [s.payload.aud, s.authorization, s.type]).sort()).to.deep.equal([
      ['ssf-a', undefined, `${CAEP}/session-revoked`], ['ssf-b', 'Bearer for-b-only', `${CAEP}/session-revoked`],
    ]);
    expect(sets[0]!.payload.txn).to.not.equal(sets[1]!.payload.txn);
    expect(sets[0]!.event).to.deep.include({ initiating_entity: 'user', reason_admin: { en: 'The person signed out of the service everywhere.' } });
  });

  it('"Stay signed in" at /session/end: session-revoked to the asking site only', async () => {
    const agent = new Agent();
    const atB = await signIn(h, b, agent, 'stay@example.com');
    await signIn(h, a, agent, 'stay@example.com');
    const from = receiver.pushed.length;
    const page = await agent.get(`${h.issuer}/session/end?client_id=ssf-b`);
    const stay = await agent.submit(page, formFor(page.body, '/session/end/confirm'));
    expect(stay.status).to.equal(303);
    const [set] = await since(from, 1);
    expect([set!.type, set!.payload.aud]).to.deep.equal([`${CAEP}/session-revoked`, 'ssf-b']);
    expect(set!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: atB.tokens.claims()!.sub });
    await signIn(h, a, new Agent(), 'stay-other@example.com');
    await h.reference.plugin.sharedSignals.accountPurged(await accountId('stay-other@example.com'));
    // The next SET is that other person's: none went to ssf-a for the one who stayed.
    const [next] = await since(from + 1, 1);
    expect([next!.type, next!.payload.aud]).to.deep.equal([`${RISC}/account-purged`, 'ssf-a']);
  });

  it('Remove access: the service\'s own access-removed event to that site only', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, a, agent, 'remove@example.com');
    await signIn(h, b, agent, 'remove@example.com');
    const from = receiver.pushed.length;
    expect((await api(agent, 'POST', '/sites/ssf-a/remove-access')).status).to.equal(204);
    const [set] = await since(from, 1);
    expect([set!.type, set!.payload.aud]).to.deep.equal([`${own}:access-removed`, 'ssf-a']);
    expect(set!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: tokens.claims()!.sub });
    expect(set!.event).to.deep.include({ reason_user: { en: 'You removed this site\'s access.' } });
  });

  it('account-purged reaches every site of the person, though their records are erased right after the call', async () => {
    const agent = new Agent();
    const atA = await signIn(h, a, agent, 'purged@example.com');
    await signIn(h, b, agent, 'purged@example.com');
    const id = await accountId('purged@example.com');
    const from = receiver.pushed.length;
    const { plugin } = h.reference;
    await plugin.stopLetterWorker();
    await plugin.sharedSignals.accountPurged(id);
    await plugin.store.del([plugin.sites.keys.sites(id)]);
    expect(await plugin.connectedSites(id)).to.deep.equal([]);
    plugin.startLetterWorker();
    const sets = await since(from, 2);
    expect(sets.map((s) => [s.payload.aud, s.type]).sort()).to.deep.equal([['ssf-a', `${RISC}/account-purged`], ['ssf-b', `${RISC}/account-purged`]]);
    expect(sets.find((s) => s.payload.aud === 'ssf-a')!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: atA.tokens.claims()!.sub });
  });

  it('plugin.deleteAccount (the reference provider\'s Delete my account): account-purged to every site of the person, in their subject there, a txn of its own at each', async () => {
    const agent = new Agent();
    const atA = await signIn(h, a, agent, 'deleted@example.com');
    const atB = await signIn(h, b, agent, 'deleted@example.com');
    const id = await accountId('deleted@example.com');
    const from = receiver.pushed.length;
    await h.reference.deleteAccount(id);
    const sets = await since(from, 2);
    expect(sets.map((s) => [s.payload.aud, s.type]).sort()).to.deep.equal([['ssf-a', `${RISC}/account-purged`], ['ssf-b', `${RISC}/account-purged`]]);
    expect(sets.find((s) => s.payload.aud === 'ssf-a')!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: atA.tokens.claims()!.sub });
    expect(sets.find((s) => s.payload.aud === 'ssf-b')!.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: atB.tokens.claims()!.sub });
    expect(sets[0]!.payload.txn).to.not.equal(sets[1]!.payload.txn);
  });
});
