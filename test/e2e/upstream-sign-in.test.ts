/**
 * Social sign-in (issue 15 item 2) through an upstream OpenID Connect provider, here a second
 * oidc-provider on loopback (test/helpers/upstream.ts), with openid-client as its client: the button and
 * the request, a new account, linking from the console, refusals and limits, re-authentication after
 * sign-out, and a log without codes or states. Through HTTP, as a browser without JavaScript (the agent).
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { discover, RP, signIn, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { claimsOf, expectCleanLog, isCallback, REDIRECT, site, startUpstreamSignIn, UPSTREAM, upstreamSteps } from '../helpers/upstream-sign-in.ts';

describe('social sign-in through an upstream OpenID Connect provider (openid-client)', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;

  const world = setUp(() => startUpstreamSignIn('upstream-sign-in'), (started) => ({ h, upstream, config } = started));
  const { loginPage, toUpstream, upstreamLogin, signInThroughUpstream, openConsole, post, linksOf } = upstreamSteps(world);

  it('offers "Continue with <name>" on the login page; the code flow with PKCE, state and nonce, and re-authentication asked (prompt=login, max_age=0)', async () => {
    upstream.people.set('ann', { email: 'ann@up.example', email_verified: true, name: 'Ann Upstream' });
    const agent = new Agent();
    const { page } = await loginPage(agent);
    expect(page.body).to.include(`>${t('en', 'login.upstream', { name: UPSTREAM.name })}</button>`);
    expect(page.headers.get('content-security-policy')).to.include(`form-action 'self' ${RP} ${upstream.issuer}`);
    const { request } = await toUpstream(agent, page);
    expect(Object.fromEntries(request)).to.include({
      client_id: upstream.client.client_id, response_type: 'code', scope: 'openid email profile',
      redirect_uri: `${h.issuer}/upstream/${UPSTREAM.id}/callback`, code_challenge_method: 'S256', prompt: 'login', max_age: '0', ui_locales: 'en',
    });
    expect(request.get('state')).to.match(/^[\w-]{32,}$/);
    expect(request.get('nonce')).to.match(/^[\w-]{32,}$/);
    expect(request.get('code_challenge')).to.match(/^[\w-]{43}$/);
  });

  it('signs in through the upstream: a new account with the verified address, linked; the site gets the address in the ID token', async () => {
    upstream.people.set('bella', { email: 'Bea@Up.example', email_verified: true, name: 'Bea' });
    const agent = new Agent();
    const { tokens } = await signInThroughUpstream(agent, 'bella');
    const claims = claimsOf(tokens);
    const account = await h.reference.accounts.findByEmail('bea@up.example');
    expect(account, 'the account of the verified address').to.not.equal(undefined);
    expect(claims).to.include({ sub: account!.accountId, email: 'bea@up.example', email_verified: true });
    const links = await linksOf(account!.accountId);
    expect(links.map((l) => [l.upstream, l.sub, l.verifiedEmail])).to.deep.equal([[UPSTREAM.id, 'bella', 'Bea@Up.example']]);
    // The next sign-in through the upstream finds the account by its link.
    const again = await signInThroughUpstream(new Agent(), 'bella');
    expect(claimsOf(again.tokens).sub).to.equal(account!.accountId);
  });

  it('links an upstream account from the console, and refuses one that is another account\'s', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'gil@example.com');
    const page = await openConsole(agent);
    const started = await post(agent, page, `/console/linked-accounts/${UPSTREAM.id}/link`);
    expect(started.status).to.equal(303);
    expect(new URL(started.location!).searchParams.get('prompt')).to.equal('login');
    upstream.people.set('gil-up', { email: 'gil.elsewhere@up.example', email_verified: true });
    const form = await agent.follow(started);
    const back = await upstreamLogin(agent, form, 'gil-up');
    expect(back.url).to.equal(`${h.issuer}/console?done=upstream_linked#notice`);
    expect(back.body).to.include(t('en', 'console.upstreams.notice.linked')).and.include('gil.elsewhere@up.example');
    const gil = (await h.reference.accounts.findByEmail('gil@example.com'))!.accountId;
    expect((await linksOf(gil)).map((l) => l.sub)).to.deep.equal(['gil-up']);

    // bea-up is linked to Bea's account: Hal cannot take it.
    const hal = new Agent();
    await signIn(h, config, hal, 'hal@example.com');
    const halPage = await openConsole(hal);
    const halForm = await hal.follow(await post(hal, halPage, `/console/linked-accounts/${UPSTREAM.id}/link`));
    const taken = await upstreamLogin(hal, halForm, 'bella');
    expect(taken.url).to.equal(`${h.issuer}/console?done=upstream_taken#notice`);
    expect(taken.body).to.include(t('en', 'console.upstreams.notice.taken'));
    expect(await linksOf((await h.reference.accounts.findByEmail('hal@example.com'))!.accountId)).to.deep.equal([]);
  });

  it('an answer that comes back while the IP has spent its checks gets 429 and still works once the wait is over', async () => {
    const agent = new Agent();
    const { page } = await loginPage(agent);
    const { form } = await toUpstream(agent, page);
    upstream.people.set('kim', { email: 'kim@up.example', email_verified: true });
    let res = await agent.submit(form, formFor(form.body, '/login'), { sub: 'kim' });
    while (res.location && !res.location.startsWith(h.issuer)) res = await agent.get(res.location);
    const answer = res.location!;
    const counter = `${h.prefix}rate:login-check-ip:{127.0.0.1}`;
    const before = await h.redis!.get(counter);
    await h.redis!.set(counter, '1000', 'PX', 60_000);
    const refused = await agent.follow(await agent.get(answer), isCallback);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    await (before === null ? h.redis!.del(counter) : h.redis!.set(counter, before, 'PX', 60_000));
    const ok = await agent.follow(await agent.get(answer), isCallback);
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include('/confirm"');
  });

  it('an upstream that refuses ends on the sign-in page saying so, every way offered; the failure counts against the IP', async () => {
    const agent = new Agent();
    const { page } = await loginPage(agent);
    const { form } = await toUpstream(agent, page);
    const checks = Number(await h.redis!.get(`${h.prefix}rate:login-check-ip:{127.0.0.1}`) ?? 0);
    let res = await agent.submit(form, formFor(form.body, '/cancel'));
    while (res.location && !res.location.startsWith(h.issuer)) res = await agent.get(res.location);
    expect(new URL(res.location!).searchParams.get('error')).to.equal('access_denied');
    const shown = await agent.follow(res);
    expect(shown.status).to.equal(403);
    expect(shown.body).to.include(`<p id="signin-error" class="error" role="alert">${t('en', 'upstream.error.denied', { name: UPSTREAM.name })}</p>`);
    expect(shown.body).to.include('name="email"');
    expect(forms(shown.body).map((f) => f.action)).to.include(formFor(page.body, `/upstream/${UPSTREAM.id}`).action);
    expect(Number(await h.redis!.get(`${h.prefix}rate:login-check-ip:{127.0.0.1}`))).to.equal(checks + 1);
    // The answer works once: replayed, it is an expired sign-in.
    const replay = await agent.follow(await agent.get(res.location!));
    expect(replay.status).to.equal(400);
    // The person tries again and gets in.
    upstream.people.set('ida', { email: 'ida@up.example', email_verified: true });
    const retry = await toUpstream(agent, shown);
    const ok = await upstreamLogin(agent, retry.form, 'ida');
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include('/confirm"');
  });

  it('after service sign-out the upstream is asked to authenticate again (prompt=login, max_age=0), though its own session lives on', async () => {
    upstream.people.set('kim', { email: 'kim@up.example', email_verified: true });
    const agent = new Agent();
    await signInThroughUpstream(agent, 'kim');
    // Sign out of the service (the question, then "Sign out").
    const question = await agent.get(`${h.issuer}/session/end`);
    const out = await agent.follow(await agent.submit(question, forms(question.body)[0]!, { logout: 'yes' }));
    expect(out.url).to.equal(`${h.issuer}/session/end/success`);
    // The site sends the person to sign in: nothing lets them in silently.
    const { page } = await loginPage(agent);
    expect(page.body).to.include('name="email"');
    const shown = upstream.loginsShown.length;
    const { form, request } = await toUpstream(agent, page);
    expect(request.get('prompt')).to.equal('login');
    expect(request.get('max_age')).to.equal('0');
    // The upstream still has its session with the person, and asks anyway.
    expect(agent.cookies.get(new URL(upstream.issuer).host)?.has('_session')).to.equal(true);
    expect(form.body).to.include('Sign in at the upstream');
    expect(upstream.loginsShown.length).to.equal(shown + 1);
    expect(upstream.loginsShown.at(-1)).to.deep.include({ prompt: 'login' });
    expect(upstream.loginsShown.at(-1)!.reasons).to.include.members(['login_prompt']);
  });

  it('counts failed upstream sign-ins against the per-IP check limit the codes use', async () => {
    const strict = await freePort();
    const up = await startTestUpstream({ redirectUri: `http://127.0.0.1:${strict}/upstream/${UPSTREAM.id}/callback` });
    const limited = await startHarness('upstream-limits', {
      port: strict, clients: [site],
      upstreams: [{ ...UPSTREAM, issuer: up.issuer, ...up.client }],
      loginCodeLimits: { ...defaultLoginCodeLimits, checksPerIp: { limit: 2, windowMs: 60_000 } },
    });
    try {
      const c = await discover(limited, site);
      const agent = new Agent();
      const begin = async () => {
        const url = oidc.buildAuthorizationUrl(c, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
        return agent.follow(await agent.get(url.href));
      };
      for (let i = 0; i < 2; i += 1) {
        const page = await begin();
        const form = await agent.follow(await agent.submit(page, formFor(page.body, `/upstream/${UPSTREAM.id}`)));
        let res = await agent.submit(form, formFor(form.body, '/cancel'));
        while (res.location && !res.location.startsWith(limited.issuer)) res = await agent.get(res.location);
        expect((await agent.follow(res)).status).to.equal(403);
      }
      const page = await begin();
      const refused = await agent.submit(page, formFor(page.body, `/upstream/${UPSTREAM.id}`));
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      expect(refused.body).to.include('Too many sign-in attempts from your network.');
      // The codes share the limit: a code check from this IP is refused too.
      const sent = await agent.follow(await agent.submit(page, formFor(page.body, '/email'), { email: 'limited@example.com' }));
      const check = await agent.submit(sent, formFor(sent.body, '/code'), { code: '000000' });
      expect(check.status).to.equal(429);
    } finally {
      await limited.close();
      await up.close();
    }
  });

  it('logs sign-ins and failures without codes, states, tokens or the upstream\'s identifiers', () => {
    expectCleanLog(world());
  });
});
