/**
 * The Shared Signals transmitter end to end: a receiver written here with
 * jose reads discovery, gets an access token by client credentials, creates
 * a push stream to its own endpoint, verifies it, and then receives one SET
 * for each loss of access and credential change, each checked by every claim
 * rule; the same by poll with acknowledgements.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent, forms } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { startSsfReceiver, verifySet, type SsfMetadata, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';
const ssfScopes = 'openid email offline_access ssf.manage ssf.read';
const receiverSite = (id: string, extra: Partial<ClientMetadata> = {}) => siteClient(id, {
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: ssfScopes, ...extra,
});

describe('Shared Signals transmitter', () => {
  let h: Harness;
  let receiver: SsfReceiver;
  let metadata: SsfMetadata;
  let pushSite: oidc.Configuration;
  const pushClient = receiverSite('ssf-push');

  setUp(async () => {
    receiver = await startSsfReceiver();
    h = await startHarness('ssf', { clients: [pushClient], allowPrivateFetchHosts: ['127.0.0.1'] });
    pushSite = await discover(h, pushClient);
    return { async close() { await h.close(); await receiver.close(); } };
  });

  const token = async (config: oidc.Configuration, scope: string) => (await oidc.clientCredentialsGrant(config, { scope })).access_token;
  const call = async (method: string, path: string, bearer: string | undefined, body?: unknown) => {
    const res = await documentedFetch(`${h.issuer}${path}`, {
      method,
      headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : undefined, headers: res.headers };
  };

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
    const streamId = created.body!.stream_id as string;
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
    const { tokens } = await signIn(h, pushSite, agent, 'ssf1@example.com', { scope: 'openid email' });
    const page = await agent.get(`${h.issuer}/session/end`);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    const [, revoked] = await receiver.received(2);
    const set = await verifySet(revoked!.set, metadata, 'ssf-push');
    expect(set.type).to.equal(`${CAEP}/session-revoked`);
    expect(set.payload.sub_id).to.deep.equal({ format: 'iss_sub', iss: h.issuer, sub: tokens.claims()!.sub });
    expect(set.payload.txn).to.be.a('string');
    expect(set.event).to.deep.include({ initiating_entity: 'user', reason_admin: { en: 'The person signed out of the service.' }, reason_user: { en: 'You signed out.' } });
    expect(set.event.event_timestamp).to.be.a('number');
    expect(receiver.pushed).to.have.length(2);
  });
});
