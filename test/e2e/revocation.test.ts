import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const siteA = siteClient('rev-a');
const siteB = siteClient('rev-b');

/** POST with HTTP Basic client authentication and a form body; the raw answer. */
async function post(h: Harness, path: string, client: { client_id: string; client_secret?: string }, form: Record<string, string>, auth?: string) {
  const basic = auth ?? `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret!)}`).toString('base64')}`;
  const res = await fetch(`${h.issuer}${path}`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
}

describe('single-token revocation and introspection', () => {
  let h: Harness;
  let a: oidc.Configuration;
  let b: oidc.Configuration;

  before(async () => {
    h = await startHarness('revocation', { clients: [siteA, siteB] });
    a = await discover(h, siteA);
    b = await discover(h, siteB);
  });
  after(() => h.close());

  const introspect = (token: string, client = siteA) => post(h, '/token/introspection', client, { token });
  const revoke = (token: string, client = siteA, hint?: string) => post(h, '/token/revocation', client, { token, ...(hint ? { token_type_hint: hint } : {}) });

  it('revoking a refresh token revokes that token only', async () => {
    const agent = new Agent();
    const first = await signIn(h, a, agent, 'r1@example.com');
    const other = await signIn(h, b, agent, 'r1@example.com');
    const res = await revoke(first.tokens.refresh_token!, siteA, 'refresh_token');
    expect(res.status).to.equal(200);
    expect(res.text).to.equal('');
    expect(await oauthError(oidc.refreshTokenGrant(a, first.tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await introspect(first.tokens.refresh_token!)).json).to.deep.equal({ active: false });
    expect((await introspect(first.tokens.access_token)).json).to.include({ active: true });
    expect((await introspect(other.tokens.access_token, siteB)).json).to.include({ active: true });
    expect((await oidc.refreshTokenGrant(b, other.tokens.refresh_token!)).access_token).to.be.a('string');
  });

  it('revoking an access token leaves its refresh token working', async () => {
    const { tokens } = await signIn(h, a, new Agent(), 'r2@example.com');
    const { store } = h.reference.plugin;
    const before = { commands: store.commandsSent, trips: store.roundTrips };
    const res = await revoke(tokens.access_token, siteA, 'access_token');
    // The token with its session (oidc-provider checks the binding) in one script, then the delete: no grant read.
    expect({ commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }).to.deep.equal({ commands: 2, trips: 2 });
    expect(res.status).to.equal(200);
    expect((await introspect(tokens.access_token)).json).to.deep.equal({ active: false });
    const refreshed = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
    expect((await introspect(refreshed.access_token)).json).to.include({ active: true });
  });

  it("answers 200 and leaves the token alone when a client revokes another client's token", async () => {
    const { tokens } = await signIn(h, b, new Agent(), 'r3@example.com');
    const res = await revoke(tokens.refresh_token!, siteA);
    expect(res.status).to.equal(200);
    expect((await introspect(tokens.access_token, siteB)).json).to.include({ active: true });
    expect((await oidc.refreshTokenGrant(b, tokens.refresh_token!)).refresh_token).to.be.a('string');
  });

  it('answers 200 for an unknown or already revoked token', async () => {
    expect((await revoke('no-such-token')).status).to.equal(200);
    const { tokens } = await signIn(h, a, new Agent(), 'r4@example.com');
    expect((await revoke(tokens.access_token)).status).to.equal(200);
    expect((await revoke(tokens.access_token)).status).to.equal(200);
  });

  it('refuses bad or missing client credentials with 401 invalid_client and WWW-Authenticate', async () => {
    for (const auth of [
      `Basic ${Buffer.from('rev-a:wrong-secret').toString('base64')}`,
      `Basic ${Buffer.from('nobody:secret').toString('base64')}`,
    ]) {
      const res = await post(h, '/token/revocation', siteA, { token: 'x' }, auth);
      expect(res.status).to.equal(401);
      expect(res.json).to.include({ error: 'invalid_client' });
      expect(res.headers.get('www-authenticate')).to.match(/^Basic /);
    }
    // oidc-provider's router matches any case and one trailing slash; so does the plugin's step.
    for (const path of ['/token/revocation', '/token/introspection', '/token', '/TOKEN/Revocation/', '/Token/']) {
      const missing = await fetch(`${h.issuer}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x&grant_type=refresh_token&refresh_token=x',
      });
      expect(missing.status, path).to.equal(401);
      expect(missing.headers.get('www-authenticate'), path).to.match(/^Basic /);
      expect(await missing.json(), path).to.deep.equal({ error: 'invalid_client', error_description: 'client authentication is required' });
    }
  });

  it('introspection: active tokens carry the RFC 7662 members; anything else is exactly { active: false }', async () => {
    const { tokens } = await signIn(h, a, new Agent(), 'r5@example.com');
    const active = (await introspect(tokens.access_token)).json!;
    expect(active).to.include({ active: true, client_id: 'rev-a', sub: tokens.claims()!.sub, token_type: 'Bearer', iss: h.issuer, scope: 'openid email' });
    expect(active.exp).to.be.a('number');
    expect(active.iat).to.be.a('number');
    // Another client's token, an unknown one, a rotated (consumed) one.
    expect((await introspect(tokens.access_token, siteB)).json).to.deep.equal({ active: false });
    expect((await introspect('unknown-token')).json).to.deep.equal({ active: false });
    const rt = (await introspect(tokens.refresh_token!)).json!;
    expect(rt).to.include({ active: true, client_id: 'rev-a' });
    expect(rt).to.not.have.property('token_type');
    await oidc.refreshTokenGrant(a, tokens.refresh_token!);
    expect((await introspect(tokens.refresh_token!)).json).to.deep.equal({ active: false });
  });
});
