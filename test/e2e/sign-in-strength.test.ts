/**
 * The sign-in's strength for sites (RFC 9470, RFC 8176; OpenID Connect Core
 * 2, 3.1.2.1, 5.5.1.1): ID tokens, and introspection of access and refresh
 * tokens, carry the acr, amr and auth_time of the sign-in behind them, for an
 * emailed code and an upstream (a passkey: sign-in-strength-browser.test.ts);
 * `max_age=0` and `acr_values` (plain, or essential through the claims
 * parameter) ask the person for a new sign-in of that strength. openid-client
 * is the site; the agent is a browser without JavaScript.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { ACR } from '../../examples/reference/strength.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { startResourceServer } from '../helpers/resource-server.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const site = siteClient('strength-site');
const REDIRECT = site.redirect_uris![0]!;
const isCallback = (u: string) => u.startsWith(REDIRECT);
const UPSTREAM = { id: 'social', name: 'Social Example' };
const essential = (values: string[]) => JSON.stringify({ id_token: { acr: { essential: true, values } } });

type Step = 'email' | 'code' | 'consent' | 'upstream' | 'link';

interface Flow {
  steps: Step[];
  /** The site's callback parameters. */
  callback: URLSearchParams;
  tokens?: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
}

describe('the sign-in\'s strength for sites: acr, amr, auth_time; max_age and acr_values', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;

  before(async () => {
    const port = await freePort();
    // localhost: passkeys are on (a domain as WebAuthn RP ID), so the page can offer them.
    upstream = await startTestUpstream({ redirectUri: `http://localhost:${port}/upstream/${UPSTREAM.id}/callback` });
    const many = { limit: 10_000, windowMs: 60_000 };
    h = await startHarness('strength', {
      port, host: 'localhost', clients: [site],
      upstreams: [{ ...UPSTREAM, issuer: upstream.issuer, ...upstream.client, scope: 'openid email profile' }],
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
    });
    config = await discover(h, site);
  });
  after(async () => {
    await h?.close();
    await upstream?.close();
  });

  /** The site sends the browser to the authorization endpoint: the first page the person sees (or the callback). */
  async function begin(agent: Agent, params: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT, scope: 'openid email', state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      ...params,
    });
    const page = await agent.follow(await agent.get(url.href), isCallback);
    return { page, verifier, state, maxAge: params.max_age === undefined ? undefined : Number(params.max_age) };
  }

  /** The person goes on from `page` (an address and its code, or the upstream as `sub`, and consent) to the callback; the site redeems a code. */
  async function walk(agent: Agent, begun: Awaited<ReturnType<typeof begin>>, who: { email?: string; sub?: string } = {}): Promise<Flow> {
    const steps: Step[] = [];
    let res: Response = begun.page;
    let code = '';
    for (let i = 0; i < 8 && !(res.location && isCallback(res.location)); i += 1) {
      const { body } = res;
      if (who.sub && body.includes(`/upstream/${UPSTREAM.id}"`)) {
        steps.push('upstream');
        const form = await agent.follow(await agent.submit(res, formFor(body, `/upstream/${UPSTREAM.id}`)));
        let back = await agent.submit(form, formFor(form.body, '/login'), { sub: who.sub });
        while (back.location && !back.location.startsWith(h.issuer)) back = await agent.get(back.location);
        res = await agent.follow(back, isCallback);
      } else if (who.email && (body.includes('name="email"') || body.includes('/link/code"'))) {
        // The address, or (linking asks first: upstream-link-first.ts) the account's code.
        const link = body.includes('/link/code"');
        steps.push(link ? 'link' : 'email');
        const sent = h.smtp.letters.length;
        res = await agent.follow(await agent.submit(res, formFor(body, link ? '/link/code' : '/email'), link ? {} : { email: who.email }), isCallback);
        const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to).includes(who.email!));
        code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
      } else if (body.includes('name="code"')) {
        steps.push('code');
        res = await agent.follow(await agent.submit(res, formFor(body, '/code'), { code }), isCallback);
      } else if (body.includes('/confirm"')) {
        steps.push('consent');
        res = await agent.follow(await agent.submit(res, formFor(body, '/confirm')), isCallback);
      } else {
        throw new Error(`unexpected page ${res.status} ${res.url}:\n${body.slice(0, 1500)}`);
      }
    }
    expect(res.location, res.body.slice(0, 800)).to.satisfy(isCallback);
    const url = new URL(res.location!);
    expect(url.searchParams.get('state')).to.equal(begun.state);
    const tokens = url.searchParams.has('code')
      ? await oidc.authorizationCodeGrant(config, url, { pkceCodeVerifier: begun.verifier, expectedState: begun.state, ...(begun.maxAge === undefined ? {} : { maxAge: begun.maxAge }) })
      : undefined;
    return { steps, callback: url.searchParams, tokens };
  }

  const flow = async (agent: Agent, params: Record<string, string>, who: { email?: string; sub?: string } = {}) => walk(agent, await begin(agent, params), who);

  /** acr, amr and auth_time of an ID token or an introspection answer. */
  const strength = (claims: Record<string, unknown> | undefined) => ({ acr: claims?.acr, amr: claims?.amr, auth_time: claims?.auth_time });
  const introspect = async (token: string) => (await oidc.tokenIntrospection(config, token)) as unknown as Record<string, unknown>;
  const idToken = (tokens: oidc.TokenEndpointResponseHelpers | undefined) => tokens?.claims() as Record<string, unknown> | undefined;
  const nowS = () => Math.floor(Date.now() / 1000);

  /** Until the clock is in a later second than `s`: a new sign-in's auth_time can then only be later. */
  async function pastSecond(s: number): Promise<void> {
    while (nowS() <= s) await new Promise((r) => setTimeout(r, 50));
  }

  async function codeSession(email: string) {
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, email);
    return { agent, tokens };
  }

  it('discovery lists the ladder (acr_values_supported) and acr, amr, auth_time among the claims', () => {
    const meta = config.serverMetadata();
    expect(meta.acr_values_supported).to.deep.equal([ACR.passkey, ACR.emailCode, ACR.federated]);
    expect(meta.claims_supported).to.include.members(['acr', 'amr', 'auth_time']);
  });

  it('an emailed code: the ID token and introspection of the access and refresh tokens say acr email-code, amr otp and when, before and after a refresh', async () => {
    const from = nowS();
    const { tokens } = await codeSession('strength-code@example.com');
    const signedIn = strength(idToken(tokens));
    expect(signedIn).to.deep.include({ acr: ACR.emailCode, amr: ['otp'] });
    expect(signedIn.auth_time).to.be.a('number').within(from, nowS());

    const access = await introspect(tokens.access_token);
    expect(access).to.include({ active: true, client_id: site.client_id, token_type: 'Bearer' });
    expect(strength(access)).to.deep.equal(signedIn);
    const refresh = await introspect(tokens.refresh_token!);
    expect(refresh).to.include({ active: true, client_id: site.client_id });
    expect(strength(refresh)).to.deep.equal(signedIn);

    await pastSecond(signedIn.auth_time as number);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(strength(idToken(refreshed)), 'the refreshed ID token').to.deep.equal(signedIn);
    expect(strength(await introspect(refreshed.access_token)), 'the new access token').to.deep.equal(signedIn);
    expect(strength(await introspect(refreshed.refresh_token!)), 'the rotated refresh token').to.deep.equal(signedIn);
  });

  it('an upstream: acr federated, amr fed and the upstream\'s own RFC 8176 values (others dropped), in the ID token and introspection', async () => {
    upstream.people.set('fed-plain', { email: 'fed-plain@up.example', email_verified: true });
    const plain = await flow(new Agent(), {}, { sub: 'fed-plain' });
    expect(plain.steps).to.deep.equal(['upstream', 'consent']);
    expect(strength(idToken(plain.tokens))).to.deep.include({ acr: ACR.federated, amr: ['fed'] });
    expect(strength(await introspect(plain.tokens!.access_token))).to.deep.equal(strength(idToken(plain.tokens)));

    upstream.people.set('fed-mfa', { email: 'fed-mfa@up.example', email_verified: true });
    upstream.amr = ['pwd', 'mfa', 'fido', 'otp', 'pwd'];
    try {
      const from = nowS();
      const withAmr = await flow(new Agent(), {}, { sub: 'fed-mfa' });
      const signedIn = strength(idToken(withAmr.tokens));
      expect(signedIn).to.deep.include({ acr: ACR.federated, amr: ['fed', 'pwd', 'mfa', 'otp'] });
      expect(signedIn.auth_time).to.be.a('number').within(from, nowS());
      expect(strength(await introspect(withAmr.tokens!.access_token))).to.deep.equal(signedIn);
      expect(strength(await introspect(withAmr.tokens!.refresh_token!))).to.deep.equal(signedIn);
    } finally {
      upstream.amr = undefined;
    }
  });

  it('the README\'s resource server answers an emailed-code token insufficient_user_authentication with acr_values and max_age, a revoked one invalid_token', async () => {
    const rs = await startResourceServer(config);
    try {
      const { tokens } = await codeSession('strength-rs@example.com');
      expect(await rs.call(tokens.access_token)).to.deep.equal({
        status: 401, challenge: 'Bearer error="insufficient_user_authentication", acr_values="phr", max_age=300',
      });
      await oidc.tokenRevocation(config, tokens.access_token);
      expect(await rs.call(tokens.access_token)).to.deep.equal({ status: 401, challenge: 'Bearer error="invalid_token"' });
    } finally {
      await rs.close();
    }
  });

  it('max_age=0 asks the person again (a new letter) and auth_time moves; without it the session is used; older tokens keep their sign-in', async () => {
    const { agent, tokens: first } = await codeSession('strength-maxage@example.com');
    const before = strength(idToken(first));
    await pastSecond(before.auth_time as number);

    const reused = await flow(agent, {});
    expect(reused.steps).to.deep.equal([]);
    expect(strength(idToken(reused.tokens))).to.deep.equal(before);

    const letters = h.smtp.letters.length;
    const fresh = await flow(agent, { max_age: '0' }, { email: 'strength-maxage@example.com' });
    expect(fresh.steps).to.deep.equal(['email', 'code']);
    expect(h.smtp.letters.length).to.equal(letters + 1);
    const after = strength(idToken(fresh.tokens));
    expect(after).to.deep.include({ acr: ACR.emailCode, amr: ['otp'] });
    expect(after.auth_time).to.be.above(before.auth_time as number);
    expect(strength(await introspect(fresh.tokens!.access_token))).to.deep.equal(after);
    // The first sign-in's tokens keep the sign-in behind them.
    expect(strength(await introspect(first.access_token))).to.deep.equal(before);
    expect(strength(await introspect(first.refresh_token!))).to.deep.equal(before);
  });

  /** The sign-in page of a request that asks for a passkey: only the passkey, the notice, and the way back. */
  function expectPasskeyOnly(page: Response) {
    expect(page.status, page.body.slice(0, 500)).to.equal(200);
    expect(page.body).to.include(t('en', 'login.strength.notice', { clientName: site.client_name! }));
    expect(page.body).to.include('/passkey"');
    expect(page.body).to.not.include('name="email"');
    expect(page.body).to.not.include(`/upstream/${UPSTREAM.id}"`);
    expect(page.body).to.include(`>${t('en', 'login.strength.cancel', { clientName: site.client_name! })}</button>`);
    // Without JavaScript (this agent) the passkey button stays hidden, and the page says why.
    expect(page.body).to.include(`data-nojs>${t('en', 'login.strength.needs_javascript')}</p>`);
  }

  for (const [how, params] of [
    ['acr_values=phr', { acr_values: ACR.passkey }],
    ['an essential acr through the claims parameter', { claims: essential([ACR.passkey]) }],
  ] as const) {
    it(`${how} above an emailed-code session: the page offers the passkey only, sends no code, and "I cannot" answers unmet_authentication_requirements`, async () => {
      const { agent } = await codeSession(`strength-phr-${how.length}@example.com`);
      const begun = await begin(agent, params);
      expectPasskeyOnly(begun.page);

      // No letter for a way the page does not offer.
      const letters = h.smtp.letters.length;
      const cancel = formFor(begun.page.body, '/unmet');
      const refused = await agent.request('POST', new URL(cancel.action.replace(/\/unmet$/, '/email'), begun.page.url).href, { ...cancel.fields, email: 'strength-phr@example.com' });
      expect(refused.status).to.equal(400);
      expect(h.smtp.letters.length).to.equal(letters);

      const back = await agent.follow(await agent.submit(begun.page, cancel), isCallback);
      const answer = await walk(agent, { ...begun, page: back });
      expect(Object.fromEntries(answer.callback)).to.deep.include({ error: 'unmet_authentication_requirements', state: begun.state });
      expect(answer.tokens).to.equal(undefined);

      // prompt=none cannot ask: login_required.
      const silent = await flow(agent, { ...params, prompt: 'none' });
      expect(Object.fromEntries(silent.callback)).to.deep.include({ error: 'login_required' });
    });
  }

  it('acr_values the session meets go straight through (a value as high on the ladder too); a value nobody knows is ignored', async () => {
    const { agent } = await codeSession('strength-met@example.com');
    for (const acrValues of [ACR.emailCode, ACR.federated, `${ACR.passkey} ${ACR.emailCode}`, 'urn:example:unknown']) {
      const met = await flow(agent, { acr_values: acrValues });
      expect(met.steps, acrValues).to.deep.equal([]);
      expect(strength(idToken(met.tokens)), acrValues).to.deep.include({ acr: ACR.emailCode, amr: ['otp'] });
    }
  });

  it('an essential acr is met exactly: the session\'s value goes through, one nobody here reaches answers unmet_authentication_requirements at once', async () => {
    const { agent } = await codeSession('strength-essential@example.com');
    const met = await flow(agent, { claims: essential([ACR.emailCode]) });
    expect(met.steps).to.deep.equal([]);
    expect(strength(idToken(met.tokens))).to.deep.include({ acr: ACR.emailCode });

    const letters = h.smtp.letters.length;
    const unknown = await begin(agent, { claims: essential(['urn:example:unknown']) });
    expect(unknown.page.location, unknown.page.body.slice(0, 500)).to.satisfy(isCallback);
    const answer = await walk(agent, unknown);
    expect(Object.fromEntries(answer.callback)).to.deep.include({ error: 'unmet_authentication_requirements' });
    expect(h.smtp.letters.length).to.equal(letters);
  });

  it('an essential federated acr over an emailed-code session: only the upstream is offered, and signing in there gives acr federated (the account\'s code first: linking asks first)', async () => {
    const { agent, tokens } = await codeSession('strength-tofed@example.com');
    upstream.people.set('tofed', { email: 'strength-tofed@example.com', email_verified: true });
    const begun = await begin(agent, { claims: essential([ACR.federated]) });
    expect(begun.page.body).to.include(`/upstream/${UPSTREAM.id}"`);
    expect(begun.page.body).to.not.include('name="email"');
    expect(begun.page.body).to.not.include('/passkey"');
    // The proof of the account is offered though the site asked for the upstream: the sign-in ends as the upstream's.
    const done = await walk(agent, begun, { sub: 'tofed', email: 'strength-tofed@example.com' });
    expect(done.steps).to.deep.equal(['upstream', 'link', 'code']);
    const claims = idToken(done.tokens);
    expect(claims?.sub).to.equal(idToken(tokens)?.sub);
    expect(strength(claims)).to.deep.include({ acr: ACR.federated, amr: ['otp', 'fed'] });
    // Linked now: the next such sign-in goes straight through.
    const again = await flow(new Agent(), { claims: essential([ACR.federated]) }, { sub: 'tofed' });
    expect(again.steps).to.deep.equal(['upstream', 'consent']);
    expect(strength(idToken(again.tokens))).to.deep.include({ acr: ACR.federated, amr: ['fed'] });
  });
});
