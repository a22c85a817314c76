/**
 * Issue 36's end to end: two reference providers, A the upstream of B. B's
 * site signs a person in through A ("Continue with Provider A"); B listens
 * to A's Shared Signals transmitter (a push stream at A to B's
 * /upstream-signals/a, made as docs/upstream-signals.md says). The person
 * signs out at A: within a bounded time B's session that signed in through A
 * is over, B's site got one logout token and one session-revoked SET, and
 * the person one security notice from B. Everything is what the package
 * already has: A transmits, B receives. The same by poll (RFC 8936): B
 * polls A's stream with its client credentials at A.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent, forms, formFor } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { freePort } from '../helpers/net.ts';
import { discover, RP, siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { receiverToken, ssfCall, startSsfReceiver, type SsfReceiver } from '../helpers/ssf-receiver.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';

for (const delivery of ['push', 'poll'] as const) describe(`two reference providers: A signs the person out, B hears it (Shared Signals ${delivery})`, function () {
  this.timeout(120_000);

  let a: Harness;
  let b: Harness;
  let logouts: BackchannelReceiver;
  let sets: SsfReceiver;
  const ssfScopes = 'openid email ssf.manage ssf.read';

  setUp(async () => {
    logouts = await startReceiver();
    sets = await startSsfReceiver();
    const bPort = await freePort();
    const bIssuer = `http://127.0.0.1:${bPort}`;
    // B as a site of A: its upstream sign-in, and a Shared Signals receiver of A's.
    const downstream = siteClient('downstream', {
      redirect_uris: [`${bIssuer}/upstream/a/callback`], grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: ssfScopes,
    });
    a = await startHarness(`two-a-${delivery}`, { clients: [downstream], allowPrivateFetchHosts: ['127.0.0.1'] });
    const bsite = siteClient('bsite', {
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: ssfScopes,
      backchannel_logout_uri: logouts.url, backchannel_logout_session_required: true,
    });
    b = await startHarness(`two-b-${delivery}`, {
      port: bPort, clients: [bsite], allowPrivateFetchHosts: ['127.0.0.1'],
      upstreams: [{
        id: 'a', name: 'Provider A', issuer: a.issuer, client_id: 'downstream', client_secret: downstream.client_secret!, scope: 'openid email',
        // By push, B makes its stream at A itself (connect); by poll, the test makes it as an operator would.
        signals: delivery === 'push'
          ? { configurationUrl: `${a.issuer}/.well-known/ssf-configuration`, stream: { tokenEndpoint: `${a.issuer}/token` } }
          : { jwksUri: `${a.issuer}/jwks`, poll: { endpoint: `${a.issuer}/ssf/poll`, tokenEndpoint: `${a.issuer}/token`, everyMs: 1500 } },
      }],
    });
    return { async close() { await b.close(); await a.close(); await logouts.close(); await sets.close(); } };
  });

  it(`a sign-out at A ends B\'s session signed in through A within seconds: one logout token, one session-revoked SET, one notice (${delivery})`, async () => {
    // B listens to A: a stream at A, made with B's client credentials at A, verified.
    if (delivery === 'push') {
      const made = await b.reference.plugin.upstreamSignals.connect('a');
      expect(made).to.deep.include({ endpoint_url: `${b.issuer}/upstream-signals/a`, how: 'created' });
      // Connecting again adopts the stream that pushes to B.
      expect(await b.reference.plugin.upstreamSignals.connect('a')).to.deep.include({ stream_id: made.stream_id, how: 'adopted' });
    } else {
      const atA = await discover(a, { client_id: 'downstream', client_secret: 'downstream-secret-0123456789abcdef', token_endpoint_auth_method: 'client_secret_basic' });
      const manageAtA = await receiverToken(atA, 'ssf.manage');
      const stream = await ssfCall(a.issuer, 'POST', '/ssf/stream', manageAtA, { events_requested: [`${CAEP}/session-revoked`], delivery: { method: 'urn:ietf:rfc:8936' } });
      expect(stream.status).to.equal(201);
      expect((await ssfCall(a.issuer, 'POST', '/ssf/verify', manageAtA, { stream_id: stream.body!.stream_id, state: 'hello-b' })).status).to.equal(204);
    }
    const heard = async (outcome: string, count: number) => {
      const deadline = Date.now() + 15_000;
      let recorded = await b.reference.plugin.upstreamSignals.recent('a');
      while (recorded.filter((r) => r.outcome === outcome).length < count && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        recorded = await b.reference.plugin.upstreamSignals.recent('a');
      }
      return recorded.filter((r) => r.outcome === outcome);
    };
    expect((await heard('verification', 1)).length).to.be.at.least(1);
    if (delivery === 'push') {
      const deadline = Date.now() + 15_000;
      while (!(await b.reference.plugin.upstreamSignals.stream('a'))?.verifiedAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect((await b.reference.plugin.upstreamSignals.stream('a'))!.verifiedAt).to.be.a('number');
    }

    // B's site listens to B.
    const bsite = await discover(b, { client_id: 'bsite', client_secret: 'bsite-secret-0123456789abcdef', token_endpoint_auth_method: 'client_secret_basic' });
    expect((await ssfCall(b.issuer, 'POST', '/ssf/stream', await receiverToken(bsite, 'ssf.manage'), {
      events_requested: [`${CAEP}/session-revoked`], delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: sets.url },
    })).status).to.equal(201);

    // The person signs in at B's site through A.
    const agent = new Agent();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(bsite, {
      redirect_uri: `${RP}/bsite/callback`, scope: 'openid email', state: 'st-b',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const isCallback = (u: string) => u.startsWith(`${RP}/bsite/callback`);
    const login = await agent.follow(await agent.get(url.href));
    const toA = await agent.submit(login, formFor(login.body, '/upstream/a'));
    expect(toA.location!.startsWith(`${a.issuer}/auth?`)).to.equal(true);
    const atAPages = await throughSignInPages(a, agent, toA, (u) => u.startsWith(b.issuer), 'pia@a.example');
    const backAtB = await throughSignInPages(b, agent, atAPages.res, isCallback, 'unused@example.com');
    const tokens = await oidc.authorizationCodeGrant(bsite, new URL(backAtB.res.location!), { pkceCodeVerifier: verifier, expectedState: 'st-b' });
    const accountId = (await b.reference.accounts.findByEmail('pia@a.example'))!.accountId;
    expect(await b.reference.plugin.sessions.list(accountId)).to.have.length(1);

    // The person signs out at A.
    const page = await agent.get(`${a.issuer}/session/end`);
    await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));

    expect(await heard('done', 1)).to.have.length(1);
    const deadline = Date.now() + 15_000;
    const subject = t('en', 'notice.upstream_sessions_ended.subject', { name: 'Provider A' });
    const letters = () => b.smtp.letters.filter((l) => l.subject === subject && JSON.stringify(l.to).includes('pia@a.example'));
    while ((logouts.tokens.length < 1 || sets.pushed.length < 1 || letters().length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await b.reference.plugin.sessions.list(accountId)).to.deep.equal([]);
    expect(await oidc.refreshTokenGrant(bsite, tokens.refresh_token!).then(() => 'ok', (err: { error?: string }) => err.error)).to.equal('invalid_grant');
    expect(logouts.tokens).to.have.length(1);
    expect((await logouts.verify(logouts.tokens[0]!, b.issuer, 'bsite')).sub).to.equal(tokens.claims()!.sub);
    expect(sets.pushed).to.have.length(1);
    expect(Object.keys((JSON.parse(Buffer.from(sets.pushed[0]!.set.split('.')[1]!, 'base64url').toString()) as { events: object }).events)).to.deep.equal([`${CAEP}/session-revoked`]);
    expect(letters()).to.have.length(1);
  });
});
