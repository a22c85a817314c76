import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import { keysWithoutTtl } from '../helpers/redis.ts';
import { discover, lettersSettled, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('site-a');

for (const embedded of [false, true]) {
  describe(`reference provider, sign-in and rotation (${embedded ? 'embedded store' : 'Redis'})`, () => {
    let h: Harness;
    let config: oidc.Configuration;
    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];

    before(async () => {
      h = await startHarness('foundation', {
        clients: [site], embedded,
        logger: { info() {}, warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }), error() {} },
      });
      config = await discover(h, site);
    });
    after(() => h.close());
    // Tests here count the store's commands per request: a letter still in hand (the theft notice
    // a reused code queues) would add its claim and done marks to the next test's count.
    beforeEach(async () => {
      expect(await lettersSettled(h), 'letters in hand before the test').to.equal(0);
    });

    it('serves discovery with the session-end, revocation and introspection endpoints', async () => {
      const res = await fetch(`${h.issuer}/.well-known/openid-configuration`);
      expect(res.status).to.equal(200);
      const doc = await res.json() as Record<string, unknown>;
      expect(doc).to.include({
        issuer: h.issuer,
        end_session_endpoint: `${h.issuer}/session/end`,
        revocation_endpoint: `${h.issuer}/token/revocation`,
        introspection_endpoint: `${h.issuer}/token/introspection`,
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
      });
    });

    it('signs in with the emailed code (authorization code + PKCE) and issues a refresh token without offline_access', async () => {
      const { tokens, code } = await signIn(h, config, new Agent(), 'alice@example.com');
      expect(code).to.match(/^\d{6}$/);
      const letter = h.smtp.letters.at(-1)!;
      expect(letter.subject).to.include(code);
      expect(letter.text).to.include(code);
      expect(tokens.access_token).to.be.a('string');
      expect(tokens.refresh_token).to.be.a('string');
      const account = await h.reference.accounts.findByEmail('alice@example.com');
      expect(tokens.claims()!.sub).to.equal(account!.accountId);
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, account!.accountId);
      expect(userinfo).to.include({ sub: account!.accountId, email: 'alice@example.com', email_verified: true });
    });

    it('rotates the refresh token on every refresh; the old one then revokes the chain', async () => {
      const { tokens } = await signIn(h, config, new Agent(), 'bob@example.com');
      const first = tokens.refresh_token!;
      const second = await oidc.refreshTokenGrant(config, first);
      expect(second.refresh_token).to.be.a('string').and.not.equal(first);
      const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
      expect(third.refresh_token).to.not.equal(second.refresh_token);
      // The rotated token comes back: theft. Everything of the grant dies.
      expect(await oauthError(oidc.refreshTokenGrant(config, first))).to.equal('invalid_grant');
      expect(await oauthError(oidc.refreshTokenGrant(config, third.refresh_token!))).to.equal('invalid_grant');
      expect((await oidc.tokenIntrospection(config, third.access_token)).active).to.equal(false);
    });

    it('answers 20 concurrent refreshes of one token with one new pair, the same in every answer (reuse leeway): one chain lives on', async () => {
      const { tokens } = await signIn(h, config, new Agent(), 'carol@example.com');
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => oidc.refreshTokenGrant(config, tokens.refresh_token!)),
      );
      expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([]);
      const answers = results.map((r) => (r as PromiseFulfilledResult<oidc.TokenEndpointResponse>).value);
      expect(new Set(answers.map((a) => a.refresh_token)).size).to.equal(1);
      expect(new Set(answers.map((a) => a.access_token)).size).to.equal(1);
      const winner = answers[0]!;
      expect((await oidc.tokenIntrospection(config, winner.access_token)).active).to.equal(true);
      const next = await oidc.refreshTokenGrant(config, winner.refresh_token!);
      expect((await oidc.tokenIntrospection(config, next.access_token)).active).to.equal(true);
      // Once the chain moved on, the old token is theft again.
      expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
      expect((await oidc.tokenIntrospection(config, next.access_token)).active).to.equal(false);
    });

    it('revokes what a code produced when the code is redeemed twice', async () => {
      const agent = new Agent();
      const verifier = oidc.randomPKCECodeVerifier();
      const redirectUri = site.redirect_uris![0]!;
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: 'openid', state: 's1',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      // Sign in once so the next authorization goes straight through.
      await signIn(h, config, agent, 'dave@example.com');
      const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(redirectUri));
      const callback = new URL(res.location!);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's1' });
      const from = warnings.length;
      expect(await oauthError(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's1' }))).to.equal('invalid_grant');
      // Reported as the theft of a code, with its site, person and grant (oidc-provider's own replay path).
      const dave = (await h.reference.accounts.findByEmail('dave@example.com'))!.accountId;
      expect(warnings.slice(from).map((w) => w.message)).to.deep.equal(['authorization code reuse detected: grant revoked']);
      expect(warnings[from]!.fields).to.include({ model: 'AuthorizationCode', clientId: 'site-a', accountId: dave });
      expect(warnings[from]!.fields!.grantId).to.be.a('string');
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).to.equal(false);
      expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('introspects an active opaque access token in one round trip (token, session and grant in one script)', async () => {
      const { tokens } = await signIn(h, config, new Agent(), 'erin@example.com');
      const { store } = h.reference.plugin;
      const before = { commands: store.commandsSent, trips: store.roundTrips };
      const result = await oidc.tokenIntrospection(config, tokens.access_token, { token_type_hint: 'access_token' });
      expect({ commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }).to.deep.equal({ commands: 1, trips: 1 });
      expect(result).to.include({ active: true, client_id: 'site-a', sub: tokens.claims()!.sub, token_type: 'Bearer', iss: h.issuer });
    });

    it('answers userinfo with the token, its session and grant in one round trip (then the host\'s account read)', async () => {
      const { tokens } = await signIn(h, config, new Agent(), 'erin2@example.com');
      const { store } = h.reference.plugin;
      const before = { commands: store.commandsSent, trips: store.roundTrips };
      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
      // The reference provider's findAccount reads the account from Redis: the second round trip.
      expect({ commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }).to.deep.equal({ commands: 2, trips: 2 });
      expect(info).to.include({ sub: tokens.claims()!.sub, email: 'erin2@example.com' });
    });

    it('refreshes with rotation and exchanges a code in the round trips the README documents', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, config, agent, 'frank@example.com');
      const { store } = h.reference.plugin;
      const measure = async (work: () => Promise<unknown>) => {
        const before = { commands: store.commandsSent, trips: store.roundTrips };
        await work();
        return { commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips };
      };
      expect(await measure(() => oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.deep.equal({ commands: 3, trips: 3 });

      const verifier = oidc.randomPKCECodeVerifier();
      const redirectUri = site.redirect_uris![0]!;
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: 'openid', state: 's2',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const res = await agent.follow(await agent.get(url.href), (u) => u.startsWith(redirectUri));
      const callback = new URL(res.location!);
      expect(await measure(() => oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's2' })))
        .to.deep.equal({ commands: 3, trips: 3 });
    });

    it('leaves no key without a TTL except the documented persistent keys (accounts, connected sites, subjects, the letter queue’s metadata and its finished letters, which the worker removes after a day)', async () => {
      // The theft above queued a letter to the person (docs/security.md "Told when a sign-in was stolen".
      const left = await keysWithoutTtl(h.reference.plugin.store, [/:account:\{/, /:account-email:\{/, /:site:\{[^}]+\}:subjects$/, /:\{letters\}:letters:(?:meta|id|events|completed|[\w-]{22})$/,
        // The Shared Signals queue's metadata and its finished jobs (a sign-out is a cause), removed by its worker after an hour.
        /:\{ssf\}:ssf:(?:meta|id|events|completed|(?:signal|set)\.[\w.-]+)$/,
        // The back-channel logout queue's metadata (docs/redis-keys.md).
        /:\{logouts\}:logouts:(?:meta|id|events)$/,
        // The session expiry sweep's schedule: one scheduler and its next run (docs/session-expiry.md).
        /:\{expiry\}:session-expiry:(?:meta|id|events|delayed|repeat|repeat:sweep(?::\d+)?)$/]);
      expect(left).to.deep.equal([]);
    });
  });
}
