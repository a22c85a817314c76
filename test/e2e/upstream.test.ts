/**
 * Social sign-in (issue 15 item 2): the reference provider signs people in
 * through an upstream OpenID Connect provider, here a second oidc-provider
 * on loopback (test/helpers/upstream.ts), with openid-client as its client.
 * Everything through HTTP, as a browser without JavaScript (the agent).
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { ConfigurationError, settingsFromEnv } from '../../examples/reference/settings.ts';
import { createCsrf } from '../../src/http/csrf.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { discover, notifyAs, RP, signIn, siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const site = siteClient('up-site');
const REDIRECT = site.redirect_uris![0]!;
const isCallback = (u: string) => u.startsWith(REDIRECT);
const UPSTREAM = { id: 'social', name: 'Social Example' };

function claimsOf(tokens: oidc.TokenEndpointResponseHelpers): Record<string, unknown> {
  return tokens.claims() as Record<string, unknown>;
}

describe('social sign-in through an upstream OpenID Connect provider (openid-client)', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;
  const logged: string[] = [];
  const logger = {
    info: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
    warn: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
    error: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
  };
  /** What must never reach a log: the codes and states of the upstream's answers. */
  const secrets: string[] = [];

  before(async () => {
    const port = await freePort();
    upstream = await startTestUpstream({ redirectUri: `http://127.0.0.1:${port}/upstream/${UPSTREAM.id}/callback` });
    h = await startHarness('upstream', {
      port,
      clients: [site],
      logger,
      upstreams: [{ ...UPSTREAM, issuer: upstream.issuer, ...upstream.client, scope: 'openid email profile' }],
      loginCodeLimits: { ...defaultLoginCodeLimits, checksPerIp: { limit: 1000, windowMs: 60_000 } },
    });
    config = await discover(h, site);
  });
  after(async () => {
    await h?.close();
    await upstream?.close();
  });

  /** The site sends the browser to sign in; the service's login page. */
  async function loginPage(agent: Agent, c: oidc.Configuration = config, client: ClientMetadata = site): Promise<{ page: Response; verifier: string; state: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(c, {
      redirect_uri: client.redirect_uris![0]!, scope: 'openid email', state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const page = await agent.follow(await agent.get(url.href));
    expect(page.status, page.body.slice(0, 500)).to.equal(200);
    return { page, verifier, state };
  }

  /** Presses "Continue with Social Example": the upstream's login form, and the request it got. */
  async function toUpstream(agent: Agent, page: Response): Promise<{ form: Response; request: URLSearchParams }> {
    const button = formFor(page.body, `/upstream/${UPSTREAM.id}`);
    const res = await agent.submit(page, button);
    expect(res.status).to.equal(303);
    expect(res.location!.startsWith(`${upstream.issuer}/auth?`), res.location).to.equal(true);
    const request = new URL(res.location!).searchParams;
    const form = await agent.follow(res);
    return { form, request };
  }

  /** Signs in at the upstream as `sub`; the response back at the service (after its own redirects). */
  async function upstreamLogin(agent: Agent, form: Response, sub: string): Promise<Response> {
    const back = await agent.submit(form, formFor(form.body, '/login'), { sub });
    // The upstream's redirects up to its answer at the service's redirect URI.
    let res = back;
    while (res.location && !res.location.startsWith(h.issuer)) res = await agent.get(res.location);
    const answer = new URL(res.location!);
    secrets.push(answer.searchParams.get('code') ?? '', answer.searchParams.get('state') ?? '');
    return agent.follow(res, isCallback);
  }

  /** The rest of a sign-in at the service (consent), and the site's tokens. */
  async function finish(agent: Agent, res: Response, verifier: string, state: string) {
    const done = await throughSignInPages(h, agent, res, isCallback, 'unused@example.com');
    expect(done.res.location, done.res.body.slice(0, 800)).to.satisfy(isCallback);
    return oidc.authorizationCodeGrant(config, new URL(done.res.location!), { pkceCodeVerifier: verifier, expectedState: state });
  }

  async function signInThroughUpstream(agent: Agent, sub: string) {
    const { page, verifier, state } = await loginPage(agent);
    const { form, request } = await toUpstream(agent, page);
    const res = await upstreamLogin(agent, form, sub);
    return { tokens: await finish(agent, res, verifier, state), request, form };
  }

  async function openConsole(agent: Agent): Promise<Response> {
    const page = await agent.follow(await agent.get(`${h.issuer}/console`));
    expect(page.url).to.equal(`${h.issuer}/console`);
    return page;
  }

  const post = (agent: Agent, page: Response, suffix: string, extra: Record<string, string> = {}) =>
    agent.request('POST', new URL(formFor(page.body, suffix).action, page.url).href, { ...formFor(page.body, suffix).fields, ...extra }, { origin: h.issuer });

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

  async function linksOf(accountId: string) {
    const raw = await h.redis!.hgetall(`${h.prefix}account:{${accountId}}:upstreams`);
    return Object.entries(raw).map(([upstream, json]) => ({ upstream, ...(JSON.parse(json) as { sub: string; verifiedEmail?: string; name?: string }) }));
  }

  it('links by verified address: the upstream says email_verified true for an address that has an account, and that account signs in', async () => {
    const agent = new Agent();
    const first = await signIn(h, config, agent, 'cleo@example.com');
    upstream.people.set('cleo-up', { email: 'cleo@example.com', email_verified: true });
    const { tokens } = await signInThroughUpstream(new Agent(), 'cleo-up');
    expect(claimsOf(tokens).sub).to.equal(claimsOf(first.tokens).sub);
    expect((await linksOf(String(claimsOf(first.tokens).sub))).map((l) => l.sub)).to.deep.equal(['cleo-up']);
  });

  it('does not link by an unverified address: a new account without an address, which /api/notify answers no_email and whose inbox fills', async () => {
    const agent = new Agent();
    const first = await signIn(h, config, agent, 'dora@example.com');
    upstream.people.set('dora-up', { email: 'dora@example.com', email_verified: false, name: 'Not Dora' });
    const { tokens } = await signInThroughUpstream(new Agent(), 'dora-up');
    const claims = claimsOf(tokens);
    expect(claims.sub).to.not.equal(claimsOf(first.tokens).sub);
    expect(claims).to.not.have.property('email');
    expect(claims).to.not.have.property('email_verified');
    expect(await linksOf(String(claimsOf(first.tokens).sub))).to.deep.equal([]);
    const stranger = await h.reference.accounts.get(String(claims.sub));
    expect(stranger).to.include({ name: 'Not Dora' });
    expect(stranger).to.not.have.property('email');
    expect((await h.reference.accounts.findByEmail('dora@example.com'))!.accountId).to.equal(claimsOf(first.tokens).sub);
    // Nor is it kept with the link, or shown: the console names the upstream account by its name.
    const [link] = await linksOf(String(claims.sub));
    expect(link).to.deep.include({ upstream: UPSTREAM.id, sub: 'dora-up', name: 'Not Dora' });
    expect(JSON.stringify(await h.redis!.hgetall(`${h.prefix}account:{${String(claims.sub)}}:upstreams`))).to.not.include('dora@example.com');

    const letters = h.smtp.letters.length;
    const answer = await notifyAs(h, site, { sub: claims.sub, category: 'transactional', title: 'Your order shipped', body: 'It arrives on Tuesday.' });
    expect(answer).to.deep.equal({ status: 202, body: { inApp: true, email: false, skipped: 'no_email' } });
    const inbox = await h.reference.plugin.inbox.page(String(claims.sub));
    expect(inbox!.items.map((i) => i.title)).to.deep.equal(['Your order shipped']);
    await new Promise((r) => setTimeout(r, 200));
    expect(h.smtp.letters.length).to.equal(letters);
  });

  it('takes an address only with the email_verified of its own source: an ID token\'s vouches for no address UserInfo gives', async () => {
    const agent = new Agent();
    const ivy = await signIn(h, config, agent, 'ivy@example.com');
    // The ID token says email_verified true without an address; UserInfo gives Ivy's address, unverified or unsaid.
    for (const [sub, userinfo] of [['ivy-up-1', { email_verified: false }], ['ivy-up-2', {}]] as const) {
      upstream.people.set(sub, { email: 'ivy@example.com', ...userinfo, name: 'Not Ivy', idToken: { email_verified: true } });
      const { tokens } = await signInThroughUpstream(new Agent(), sub);
      const claims = claimsOf(tokens);
      expect(claims.sub, sub).to.not.equal(claimsOf(ivy.tokens).sub);
      expect(claims).to.not.have.property('email');
      expect(await h.reference.accounts.get(String(claims.sub))).to.not.have.property('email');
      expect((await linksOf(String(claims.sub))).map((l) => [l.sub, l.verifiedEmail])).to.deep.equal([[sub, undefined]]);
    }
    expect(await linksOf(String(claimsOf(ivy.tokens).sub))).to.deep.equal([]);

    // An ID token with its own verified address: that one, not UserInfo's.
    upstream.people.set('jay-up', { email: 'ivy@example.com', email_verified: true, idToken: { email: 'jay@up.example', email_verified: true } });
    const jay = claimsOf((await signInThroughUpstream(new Agent(), 'jay-up')).tokens);
    expect(jay).to.include({ sub: (await h.reference.accounts.findByEmail('jay@up.example'))!.accountId, email: 'jay@up.example', email_verified: true });
    // An ID token's unverified address is not made good by UserInfo's email_verified.
    upstream.people.set('kai-up', { email: 'ivy@example.com', email_verified: true, idToken: { email: 'ivy@example.com', email_verified: false } });
    const kai = claimsOf((await signInThroughUpstream(new Agent(), 'kai-up')).tokens);
    expect(kai.sub).to.not.equal(claimsOf(ivy.tokens).sub);
    expect(kai).to.not.have.property('email');
  });

  it('links an upstream account with an unverified address from the console without keeping or showing the address', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'lou@example.com');
    const page = await openConsole(agent);
    upstream.people.set('lou-up', { email: 'lou.unverified@up.example', email_verified: false, name: 'Lou Up' });
    const back = await upstreamLogin(agent, await agent.follow(await post(agent, page, `/console/linked-accounts/${UPSTREAM.id}/link`)), 'lou-up');
    expect(back.url).to.equal(`${h.issuer}/console?done=upstream_linked#notice`);
    expect(back.body).to.include('Lou Up').and.not.include('lou.unverified@up.example');
    const lou = (await h.reference.accounts.findByEmail('lou@example.com'))!.accountId;
    const links = await linksOf(lou);
    expect(links.map((l) => Object.keys(l).sort())).to.deep.equal([['lastUsedAt', 'linkedAt', 'name', 'sub', 'upstream']]);
    expect(links[0]).to.deep.include({ upstream: UPSTREAM.id, sub: 'lou-up', name: 'Lou Up' });
  });

  it('lists linked accounts in the console and unlinks one, but never the last way in', async () => {
    // An account with an address: unlinking leaves the code.
    upstream.people.set('eve-up', { email: 'eve@example.com', email_verified: true });
    const agent = new Agent();
    const { tokens } = await signInThroughUpstream(agent, 'eve-up');
    const page = await openConsole(agent);
    expect(page.body).to.include('id="linked-accounts"').and.include(t('en', 'console.upstreams.linked')).and.include('eve@example.com');
    const done = await post(agent, page, `/console/linked-accounts/${UPSTREAM.id}/unlink`);
    expect(done.status).to.equal(303);
    expect(done.location).to.equal(`${h.issuer}/console?done=upstream_unlinked#notice`);
    const after = await agent.get(done.location!);
    expect(after.body).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t('en', 'console.upstreams.notice.unlinked')}</p>`);
    expect(await linksOf(String(claimsOf(tokens).sub))).to.deep.equal([]);
    expect(forms(after.body).map((f) => f.action)).to.include(`/console/linked-accounts/${UPSTREAM.id}/link`);

    // An account with nothing but its link: no Unlink offered, and refused if asked.
    upstream.people.set('finn-up', { name: 'Finn' });
    const lone = new Agent();
    const signedIn = await signInThroughUpstream(lone, 'finn-up');
    const console = await openConsole(lone);
    expect(console.body).to.include(t('en', 'console.upstreams.only_way'));
    expect(forms(console.body).map((f) => f.action)).to.not.include(`/console/linked-accounts/${UPSTREAM.id}/unlink`);
    // A request the page does not offer, as a script would send it, with the person's form token.
    const csrf = createCsrf(() => createHmac('sha256', 'test-cookie-key-0123456789').update('reference-provider').digest('base64url'))
      .token('console-ways', String(claimsOf(signedIn.tokens).sub));
    const refused = await lone.request('POST', `${h.issuer}/console/linked-accounts/${UPSTREAM.id}/unlink`, { csrf }, { origin: h.issuer });
    expect(refused.location).to.equal(`${h.issuer}/console?done=upstream_last#notice`);
    const shown = await lone.get(refused.location!);
    expect(shown.body).to.include(`<p id="notice" class="notice notice-error" role="alert" tabindex="-1">${t('en', 'console.upstreams.notice.last')}</p>`);
    expect((await linksOf(String(claimsOf(signedIn.tokens).sub))).map((l) => l.sub)).to.deep.equal(['finn-up']);
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

  it('an upstream that cannot be reached, or does not authenticate the person again, ends on the sign-in page saying so', async () => {
    const closed = await freePort();
    const down = await startHarness('upstream-down', {
      clients: [site], upstreams: [{ ...UPSTREAM, issuer: `http://127.0.0.1:${closed}`, client_id: 'x', client_secret: 'y' }],
    });
    try {
      const agent = new Agent();
      const c = await discover(down, site);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(c, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const page = await agent.follow(await agent.get(url.href));
      const res = await agent.submit(page, formFor(page.body, `/upstream/${UPSTREAM.id}`));
      expect(res.status).to.equal(502);
      expect(res.body).to.include(t('en', 'upstream.error.unavailable', { name: UPSTREAM.name })).and.include('name="email"');
    } finally {
      await down.close();
    }

    // An upstream that lets an old session through (auth_time before the request).
    upstream.people.set('jo', { email: 'jo@up.example', email_verified: true });
    const agent = new Agent();
    const { page } = await loginPage(agent);
    const { form } = await toUpstream(agent, page);
    upstream.stale = true;
    const res = await upstreamLogin(agent, form, 'jo').finally(() => { upstream.stale = false; });
    expect(res.status).to.equal(502);
    expect(/id="signin-error"[^>]*>([^<]*)/.exec(res.body)?.[1]).to.equal(t('en', 'upstream.error.reauth', { name: UPSTREAM.name }));
    expect(await h.reference.accounts.findByEmail('jo@up.example')).to.equal(undefined);
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
    const text = logged.join('\n');
    expect(text).to.include('signed in through an upstream').and.include('upstream sign-in failed');
    expect(secrets.length).to.be.greaterThan(10);
    for (const secret of secrets.filter((s) => s.length >= 20)) expect(text, secret).to.not.include(secret);
    expect(text).to.not.include(upstream.client.client_secret);
  });
});

describe('CONFIG_FILE upstreams', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'osn-upstreams-')); });
  after(() => rm(dir, { recursive: true, force: true }));

  async function settings(upstreams: unknown[]) {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, JSON.stringify({ clients: [], upstreams }));
    return settingsFromEnv({ CONFIG_FILE: path });
  }
  async function refusal(upstreams: unknown[]): Promise<string> {
    try {
      await settings(upstreams);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigurationError);
      return (err as Error).message.replace(/^CONFIG_FILE \S+: /, '');
    }
    return 'accepted';
  }
  const good = { id: 'social', name: 'Social', issuer: 'https://accounts.social.example', client_id: 'id', client_secret: 'secret' };

  it('reads { id, name, issuer, client_id, client_secret, scope }; none means no social sign-in', async () => {
    expect((await settings([{ ...good, scope: 'openid email' }])).upstreams).to.deep.equal([{ ...good, scope: 'openid email' }]);
    expect((await settings([])).upstreams).to.deep.equal([]);
  });

  it('names the field of a bad upstream', async () => {
    expect(await refusal([{ ...good, id: 'Social Login' }])).to.equal('upstreams[0].id: must be 1-40 lower-case letters, digits and hyphens');
    expect(await refusal([{ ...good, issuer: 'http://accounts.social.example' }])).to.match(/^upstreams\[0\]\.issuer: must be an https:\/\/ URL/);
    expect(await refusal([{ ...good, issuer: 'http://127.0.0.1:9000' }])).to.equal('accepted');
    expect(await refusal([{ ...good, scope: 'email' }])).to.equal('upstreams[0].scope: must include openid');
    expect(await refusal([{ ...good, client_secret: '' }])).to.match(/^upstreams\[0\]\.client_secret: /);
    expect(await refusal([{ ...good, extra: 1 }])).to.match(/^upstreams\[0\]: /);
    expect(await refusal([good, { ...good, name: 'Again' }])).to.equal('upstreams[1].id: duplicate "social"');
  });
});
