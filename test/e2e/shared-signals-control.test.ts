/**
 * The Shared Signals stream-control refusals, exactly (status, error code,
 * body, challenge): a second create 409, a malformed body 400, a missing or
 * bad token 401 on every operation, a token without the scope 403, an
 * unknown stream 404, verification too soon 429; then replace and delete.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { receiverToken, ssfCall } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const OWN = 'urn:oidc-signout-notify:secevent:event-type';
const receiverSite = (id: string, scope = 'openid email ssf.manage ssf.read') => siteClient(id, { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope });
// A site allowed client credentials whose metadata names no scope: oidc-provider would let it ask for any.
const scopelessSite = siteClient('ssf-scopeless', { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'] });

describe('Shared Signals stream control: the refusals, exactly', () => {
  let h: Harness;
  let pushSite: oidc.Configuration;
  let pollSite: oidc.Configuration;
  let plainSite: oidc.Configuration;
  let scopeless: oidc.Configuration;
  let streamId: string;
  let pollStreamId: string;

  setUp(async () => {
    h = await startHarness('ssf-control', { clients: [receiverSite('ssf-push'), receiverSite('ssf-poll'), receiverSite('ssf-plain', 'openid email'), scopelessSite], allowPrivateFetchHosts: ['127.0.0.1'] });
    [pushSite, pollSite, plainSite, scopeless] = await Promise.all([discover(h, receiverSite('ssf-push')), discover(h, receiverSite('ssf-poll')), discover(h, receiverSite('ssf-plain', 'openid email')), discover(h, scopelessSite)]);
    return h;
  });

  const token = receiverToken;
  const call = (method: string, path: string, bearer: string | undefined, body?: unknown) => ssfCall(h.issuer, method, path, bearer, body);

  before(async () => {
    const push = await call('POST', '/ssf/stream', await token(pushSite, 'ssf.manage'), { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://receiver.example/ssf' } });
    const poll = await call('POST', '/ssf/stream', await token(pollSite, 'ssf.manage'), { delivery: { method: 'urn:ietf:rfc:8936' } });
    expect([push.status, poll.status]).to.deep.equal([201, 201]);
    streamId = (push.body as { stream_id: string }).stream_id;
    pollStreamId = (poll.body as { stream_id: string }).stream_id;
    expect((await call('POST', '/ssf/verify', await token(pollSite, 'ssf.manage'), { stream_id: pollStreamId })).status).to.equal(204);
  });

  const error = (status: number, code: string, description: string) => ({ status, body: { error: code, error_description: description } });
  const answer = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });

  it('a second create is 409 stream_exists', async () => {
    expect(answer(await call('POST', '/ssf/stream', await token(pushSite, 'ssf.manage'), { delivery: { method: 'urn:ietf:rfc:8936' } })))
      .to.deep.equal(error(409, 'stream_exists', 'this site has a stream already'));
  });

  it('a malformed body is 400 invalid_request naming the problem', async () => {
    const pushManage = await token(pushSite, 'ssf.manage');
    expect(answer(await call('POST', '/ssf/stream', pushManage, '{not json'))).to.deep.equal(error(400, 'invalid_request', 'body is not valid JSON'));
    expect(answer(await call('PATCH', '/ssf/stream', pushManage, { stream_id: streamId, delivery: { method: 'urn:ietf:rfc:8935' } })))
      .to.deep.equal(error(400, 'invalid_request', 'delivery.endpoint_url: is required for push delivery'));
    expect(answer(await call('POST', '/ssf/status', pushManage, { stream_id: streamId, status: 'asleep' })).status).to.equal(400);
  });

  it('a receiver\'s token is 48 characters (288 bits: the adapter tells it from others by that) and introspects as active', async () => {
    const value = await token(pushSite, 'ssf.read');
    expect(value).to.have.length(48);
    expect(await oidc.tokenIntrospection(pushSite, value)).to.deep.include({ active: true, client_id: 'ssf-push', scope: 'ssf.read' });
    await oidc.tokenRevocation(pushSite, value);
    expect(answer(await call('GET', '/ssf/stream', value))).to.deep.equal(error(401, 'invalid_token', 'the access token is not valid'));
  });

  it('a missing or bad token is 401 invalid_token with a Bearer challenge, on every operation', async () => {
    for (const [method, path] of [['POST', '/ssf/stream'], ['GET', `/ssf/stream?stream_id=${streamId}`], ['PATCH', '/ssf/stream'], ['PUT', '/ssf/stream'], ['DELETE', `/ssf/stream?stream_id=${streamId}`], ['POST', '/ssf/verify'], ['POST', '/ssf/poll']] as const) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : { stream_id: streamId };
      const missing = await call(method, path, undefined, body);
      expect(answer(missing), `${method} ${path}`).to.deep.equal(error(401, 'invalid_token', 'a Bearer access token is required'));
      expect(missing.headers.get('www-authenticate')).to.equal('Bearer realm="ssf"');
      const bad = await call(method, path, 'not-a-token', body);
      expect(answer(bad), `${method} ${path}`).to.deep.equal(error(401, 'invalid_token', 'the access token is not valid'));
      expect(bad.headers.get('www-authenticate')).to.equal('Bearer realm="ssf", error="invalid_token"');
    }
  });

  it('a token without ssf.manage may read but not change: 403 insufficient_scope', async () => {
    const read = await token(pushSite, 'ssf.read');
    const res = await call('POST', '/ssf/verify', read, { stream_id: streamId });
    expect(answer(res)).to.deep.equal(error(403, 'insufficient_scope', 'the access token needs the scope ssf.manage'));
    expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="ssf", error="insufficient_scope", scope="ssf.manage"');
    expect((await call('GET', `/ssf/stream?stream_id=${streamId}`, read)).status).to.equal(200);
    expect(answer(await call('GET', '/ssf/stream', read))).to.have.property('status', 200);
    // A site not registered for the Shared Signals scopes gets none, and a token without them reads nothing.
    expect(await oauthError(token(plainSite, 'ssf.manage'))).to.equal('invalid_scope');
    // Nor does a site whose metadata names no scope at all (oidc-provider would allow it any); its other scopes stay.
    expect(await oauthError(token(scopeless, 'ssf.manage'))).to.equal('invalid_scope');
    expect(await oauthError(token(scopeless, 'ssf.read'))).to.equal('invalid_scope');
    expect((await oidc.clientCredentialsGrant(scopeless, { scope: 'email' })).scope).to.equal('email');
    expect(answer(await call('GET', '/ssf/stream', await token(plainSite, 'email'))))
      .to.deep.equal(error(403, 'insufficient_scope', 'the access token needs the scope ssf.read or ssf.manage'));
  });

  it('a person\'s access token carrying ssf.manage is no receiver\'s token: 401 invalid_token, the stream unchanged', async () => {
    // Such a token travels to the site's resource servers; whoever holds one must not pause or repoint the
    // stream through which the site hears of every loss of access.
    const { tokens } = await signIn(h, pushSite, new Agent(), 'ssf-person@example.com', { scope: 'openid ssf.manage ssf.read' });
    expect(tokens.scope?.split(' ')).to.include('ssf.manage');
    for (const [method, path, body] of [['POST', '/ssf/status', { stream_id: streamId, status: 'disabled' }], ['GET', `/ssf/stream?stream_id=${streamId}`, undefined]] as const) {
      const res = await call(method, path, tokens.access_token, body);
      expect(answer(res)).to.deep.equal(error(401, 'invalid_token', 'the access token is not valid'));
      expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="ssf", error="invalid_token"');
    }
    const status = await call('GET', `/ssf/status?stream_id=${streamId}`, await token(pushSite, 'ssf.read'));
    expect(status.body).to.deep.include({ status: 'enabled' });
  });

  it('an unknown stream is 404 not_found on read, update, replace and delete', async () => {
    const manage = await token(pushSite, 'ssf.manage');
    const notFound = error(404, 'not_found', 'no such stream');
    expect(answer(await call('GET', '/ssf/stream?stream_id=nope', manage))).to.deep.equal(notFound);
    expect(answer(await call('PATCH', '/ssf/stream', manage, { stream_id: 'nope', description: 'x' }))).to.deep.equal(notFound);
    expect(answer(await call('PUT', '/ssf/stream', manage, { stream_id: 'nope', delivery: { method: 'urn:ietf:rfc:8936' } }))).to.deep.equal(notFound);
    expect(answer(await call('DELETE', '/ssf/stream?stream_id=nope', manage))).to.deep.equal(notFound);
    // Another site's stream is unknown to this one.
    expect(answer(await call('GET', `/ssf/stream?stream_id=${pollStreamId}`, manage))).to.deep.equal(notFound);
  });

  it('verification again within min_verification_interval is 429 with Retry-After', async () => {
    const manage = await token(pollSite, 'ssf.manage');
    const res = await call('POST', '/ssf/verify', manage, { stream_id: pollStreamId, state: 'again' });
    expect(answer(res)).to.deep.equal(error(429, 'rate_limited', 'at most one verification every 30 seconds'));
    expect(res.headers.get('retry-after')).to.equal('30');
  });

  it('a stream created without events_requested asks for the standard events; the service\'s own only by name', async () => {
    const read = await call('GET', `/ssf/stream?stream_id=${streamId}`, await token(pushSite, 'ssf.read'));
    const body = read.body as { events_supported: string[]; events_requested: string[]; events_delivered: string[]; delivery: unknown };
    const standard = [`${CAEP}/session-revoked`, `${CAEP}/credential-change`, `${CAEP}/token-claims-change`, `${RISC}/account-disabled`, `${RISC}/account-purged`, `${RISC}/identifier-changed`];
    expect(body.events_supported).to.deep.equal([...standard, `${OWN}:site-blocked`, `${OWN}:access-removed`]);
    expect(body.events_requested).to.deep.equal(standard);
    expect(body.events_delivered).to.deep.equal(standard);
    expect(body.delivery).to.deep.equal({ method: 'urn:ietf:rfc:8935', endpoint_url: 'https://receiver.example/ssf' });
  });

  it('replaces (PUT), then deletes a stream: 200, 204, then 404', async () => {
    const manage = await token(pollSite, 'ssf.manage');
    const replaced = await call('PUT', '/ssf/stream', manage, { stream_id: pollStreamId, events_requested: [`${CAEP}/credential-change`], delivery: { method: 'urn:ietf:rfc:8936' } });
    expect(replaced.status).to.equal(200);
    expect(replaced.body).to.deep.include({ stream_id: pollStreamId, events_requested: [`${CAEP}/credential-change`], min_verification_interval: 30 });
    expect((await call('DELETE', `/ssf/stream?stream_id=${pollStreamId}`, manage)).status).to.equal(204);
    expect(answer(await call('GET', `/ssf/stream?stream_id=${pollStreamId}`, manage))).to.deep.equal(error(404, 'not_found', 'no such stream'));
    expect((await call('GET', '/ssf/stream', manage)).body).to.deep.equal([]);
  });
});
