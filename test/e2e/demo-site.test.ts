import { once } from 'node:events';
import { readFileSync } from 'node:fs';

import { expect } from 'chai';
import { decodeJwt } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoSite, type BackchannelLogoutEvent, type DemoSite, type RefreshFailedEvent } from '../../examples/demo-site/site.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';

/** The demo-site client exactly as examples/config.json registers it, moved to `base`. */
const shipped = (JSON.parse(readFileSync(new URL('../../examples/config.json', import.meta.url), 'utf8')) as { clients: ClientMetadata[] })
  .clients.find((c) => c.client_id === 'demo-site')!;
const SHIPPED_BASE = 'http://localhost:3001';

function movedTo(client: ClientMetadata, base: string, extra: Partial<ClientMetadata> = {}): ClientMetadata {
  return { ...(JSON.parse(JSON.stringify(client).replaceAll(SHIPPED_BASE, base)) as ClientMetadata), ...extra };
}

async function twoFreePorts(): Promise<[number, number]> {
  const a = await freePort();
  let b = await freePort();
  while (b === a) b = await freePort();
  return [a, b];
}

/** Every response from `start` on, following redirects as a browser does. */
async function walk(agent: Agent, start: Response): Promise<Response[]> {
  const hops = [start];
  let res = start;
  while (res.location && hops.length < 20) {
    res = await agent.get(res.location);
    hops.push(res);
  }
  return hops;
}

const SESSION_COOKIE = 'demo_session';

describe('demo relying site (examples/demo-site)', () => {
  let h: Harness;
  let site: DemoSite;
  let plain: DemoSite;
  let base: string;
  let plainBase: string;
  const logs: string[] = [];

  before(async () => {
    const [port, plainPort] = await twoFreePorts();
    base = `http://127.0.0.1:${port}`;
    plainBase = `http://127.0.0.1:${plainPort}`;
    const client = movedTo(shipped, base);
    // The same site registered without back-channel logout: it only learns of
    // a service sign-out when its next refresh fails.
    const plainClient = movedTo(shipped, plainBase, { client_id: 'demo-plain', backchannel_logout_uri: undefined, backchannel_logout_session_required: undefined });
    h = await startHarness('demo-site', { clients: [client, plainClient], allowPrivateFetchHosts: ['127.0.0.1'] });
    const common = { issuer: new URL(h.issuer), allowInsecure: true, log: (line: string) => { logs.push(line); } };
    site = createDemoSite({ ...common, clientId: 'demo-site', clientSecret: client.client_secret!, baseUrl: base });
    plain = createDemoSite({ ...common, clientId: 'demo-plain', clientSecret: plainClient.client_secret!, baseUrl: plainBase });
    await site.listen(port, '127.0.0.1');
    await plain.listen(plainPort, '127.0.0.1');
  });
  after(async () => {
    await site?.close();
    await plain?.close();
    await h?.close();
  });

  const demoCookie = (agent: Agent, at = base) => agent.cookies.get(new URL(at).host)?.get(SESSION_COOKIE);

  /**
   * `/login` on the demo site, the provider's pages (address, emailed code,
   * consent) as a person fills them in, `/callback`, and back to `/`.
   */
  async function signInThroughDemo(agent: Agent, email: string, at = base): Promise<Response> {
    const start = await agent.get(`${at}/login`);
    expect(start.status).to.equal(303);
    expect(start.location).to.match(new RegExp(`^${h.issuer}/auth\\?`));
    const atDemo = (u: string) => u.startsWith(at);
    const { res } = await throughSignInPages(h, agent, start, atDemo, email);
    expect(res.location).to.match(new RegExp(`^${at}/callback\\?`));
    const callback = await agent.get(res.location!);
    expect(callback.status).to.equal(303);
    expect(callback.location).to.equal(`${at}/`);
    expect(demoCookie(agent, at)).to.be.a('string');
    const home = await agent.get(callback.location!);
    expect(home.status).to.equal(200);
    return home;
  }

  /** The provider's own /session/end without a hint: the confirmation page, "Sign out". */
  async function signOutAtProvider(agent: Agent): Promise<void> {
    const page = await agent.get(`${h.issuer}/session/end`);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('Stay signed in');
    const done = await agent.follow(await agent.submit(page, forms(page.body)[0]!, { logout: 'yes' }));
    expect(done.url).to.equal(`${h.issuer}/session/end/success`);
  }

  it('ships a demo-site client consistent with port 3001 and back-channel logout', () => {
    const uris = [...shipped.redirect_uris!, ...shipped.post_logout_redirect_uris!, shipped.backchannel_logout_uri!];
    expect(uris).to.deep.equal([`${SHIPPED_BASE}/callback`, `${SHIPPED_BASE}/`, `${SHIPPED_BASE}/backchannel-logout`]);
    expect(shipped.backchannel_logout_session_required).to.equal(true);
  });

  it('signs in: /login -> provider pages (PKCE, state, nonce) -> /callback -> / shows the email', async () => {
    const agent = new Agent();
    const start = await agent.get(`${base}/login`);
    const auth = new URL(start.location!);
    expect(Object.fromEntries(auth.searchParams)).to.include({
      client_id: 'demo-site', redirect_uri: `${base}/callback`, response_type: 'code', scope: 'openid email', code_challenge_method: 'S256',
    });
    expect(auth.searchParams.get('state')).to.be.a('string');
    expect(auth.searchParams.get('nonce')).to.be.a('string');
    expect(auth.searchParams.has('prompt')).to.equal(false);
    expect(start.headers.getSetCookie().join('\n')).to.match(/demo_sign_in=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600/);

    const home = await signInThroughDemo(new Agent(), "o'hara+demo@example.com");
    expect(home.body).to.include('Signed in as <strong>o&#39;hara+demo@example.com</strong>');
    expect(home.body).to.not.include("o'hara");
    expect(home.headers.get('content-security-policy')).to.match(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self' http:\/\/127\.0\.0\.1:\d+; frame-ancestors 'none'; base-uri 'none'$/);
    expect(home.headers.get('cache-control')).to.equal('no-store');
    expect(home.body).to.not.include('<script');
    for (const action of ['/logout', '/logout/everywhere', '/refresh']) {
      const form = formFor(home.body, action);
      expect(form.method).to.equal('post');
      expect(form.fields.csrf).to.match(/^[\w-]{43}$/);
    }
  });

  it('offers offline_access with prompt=consent', async () => {
    const start = await new Agent().get(`${base}/login?offline_access=1`);
    expect(start.status).to.equal(303);
    const auth = new URL(start.location!);
    expect(auth.searchParams.get('scope')).to.equal('openid email offline_access');
    expect(auth.searchParams.get('prompt')).to.equal('consent');
  });

  it('refuses a state-changing POST without the CSRF token', async () => {
    const agent = new Agent();
    await signInThroughDemo(agent, 'csrf@example.com');
    const res = await agent.request('POST', `${base}/logout`, { csrf: 'wrong' });
    expect(res.status).to.equal(403);
    expect((await agent.get(`${base}/`)).body).to.include('Signed in as <strong>csrf@example.com</strong>');
  });

  it('"Sign out of this site" drops the site\'s cookie only; signing in again goes straight through', async () => {
    const agent = new Agent();
    const home = await signInThroughDemo(agent, 'level1@example.com');
    const sessionsBefore = site.sessionCount();
    const res = await agent.submit(home, formFor(home.body, '/logout'));
    expect(res.status).to.equal(303);
    expect(res.location).to.equal(`${base}/?notice=signed-out-here`);
    expect(res.headers.getSetCookie()).to.deep.equal([`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`]);
    expect(demoCookie(agent)).to.equal(undefined);
    expect(site.sessionCount()).to.equal(sessionsBefore - 1);
    const after = await agent.get(res.location!);
    expect(after.body).to.include('You are not signed in.');
    expect(after.body).to.include('You are signed out of this site.');

    // The service session lives: /login comes back signed in without a single
    // page of the provider (no address, no code, no letter).
    const letters = h.smtp.letters.length;
    const hops = await walk(agent, await agent.get(`${base}/login`));
    const last = hops.at(-1)!;
    expect(hops.slice(0, -1).map((r) => r.status)).to.satisfy((s: number[]) => s.every((x) => x === 303 || x === 302));
    expect(hops.some((r) => r.url.startsWith(h.issuer) && r.status === 200)).to.equal(false);
    expect(hops.map((r) => new URL(r.url).origin + new URL(r.url).pathname)).to.include(`${base}/callback`);
    expect(last.url).to.equal(`${base}/`);
    expect(last.status).to.equal(200);
    expect(last.body).to.include('Signed in as <strong>level1@example.com</strong>');
    expect(h.smtp.letters.length).to.equal(letters);
  });

  it('"Sign out everywhere" drops its cookie before the redirect to /session/end, returns without a question, and gets the back-channel logout', async () => {
    const agent = new Agent();
    const home = await signInThroughDemo(agent, 'level2@example.com');
    const sessionsBefore = site.sessionCount();

    const res = await agent.submit(home, formFor(home.body, '/logout/everywhere'));
    expect(res.status).to.equal(303);
    // The site's own session is gone on this very response.
    const setCookies = res.headers.getSetCookie();
    expect(setCookies).to.include(`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`);
    expect(demoCookie(agent)).to.equal(undefined);
    expect(site.sessionCount()).to.equal(sessionsBefore - 1);

    const end = new URL(res.location!);
    expect(`${end.origin}${end.pathname}`).to.equal(`${h.issuer}/session/end`);
    expect(end.searchParams.get('post_logout_redirect_uri')).to.equal(`${base}/`);
    expect(end.searchParams.get('client_id')).to.equal('demo-site');
    const state = end.searchParams.get('state')!;
    expect(state).to.be.a('string').and.not.equal('');
    expect(setCookies).to.include(`demo_logout_state=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600`);
    const hint = end.searchParams.get('id_token_hint')!;
    const claims = decodeJwt(hint);
    expect(claims).to.include({ aud: 'demo-site', iss: h.issuer });
    expect(claims.sid).to.be.a('string');

    // The hint matches the session: the page submits itself (no question) ...
    const backchannel = once(site.events, 'backchannel-logout') as Promise<[BackchannelLogoutEvent]>;
    const page = await agent.get(res.location!);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<script>');
    expect(page.body).to.not.include('Stay signed in');
    const form = forms(page.body)[0]!;
    expect(form.fields).to.include({ logout: 'yes' });
    const back = await agent.submit(page, form);
    // ... and the browser lands on the registered address with the state.
    expect(back.status).to.equal(303);
    expect(back.location).to.equal(`${base}/?state=${encodeURIComponent(state)}`);

    // The provider told the site through the back channel (already signed out here).
    const [event] = await backchannel;
    expect(event).to.deep.equal({ sub: claims.sub, sid: claims.sid, dropped: 0 });
    expect(logs).to.include(`demo site: back-channel logout sub=${claims.sub} sid=${claims.sid}: dropped 0 session(s)`);

    const landing = await agent.get(back.location!);
    expect(landing.status).to.equal(200);
    expect(landing.body).to.include('You are signed out of this site and of the sign-in service.');
    expect(landing.body).to.include('You are not signed in.');
    expect(landing.headers.getSetCookie()).to.include('demo_logout_state=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT');

    // The service session is over: signing in again asks for the address.
    const again = await agent.follow(await agent.get(`${base}/login`), (u) => u.startsWith(base));
    expect(again.status).to.equal(200);
    expect(again.url).to.match(new RegExp(`^${h.issuer}/interaction/`));
    expect(again.body).to.include('name="email"');

    // An ID token is not a logout token.
    const refused = await fetch(`${base}/backchannel-logout`, { method: 'POST', body: new URLSearchParams({ logout_token: hint }) });
    expect(refused.status).to.equal(400);
    expect(await refused.json()).to.deep.equal({ error: 'invalid_request', error_description: 'invalid logout token' });
  });

  it('drops its session when the provider says, through the back channel, that the person signed out elsewhere', async () => {
    const agent = new Agent();
    await signInThroughDemo(agent, 'elsewhere@example.com');
    const before = site.sessionCount();
    const backchannel = once(site.events, 'backchannel-logout') as Promise<[BackchannelLogoutEvent]>;
    await signOutAtProvider(agent);
    const [event] = await backchannel;
    expect(event.dropped).to.equal(1);
    expect(event.sid).to.be.a('string');
    expect(site.sessionCount()).to.equal(before - 1);
    const home = await agent.get(`${base}/`);
    expect(home.body).to.include('You are not signed in.');
    expect(home.headers.getSetCookie()).to.deep.equal([`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`]);
  });

  it('refuses a bad logout token with 400', async () => {
    const res = await fetch(`${base}/backchannel-logout`, { method: 'POST', body: new URLSearchParams({ logout_token: 'not.a.jwt' }) });
    expect(res.status).to.equal(400);
    const empty = await fetch(`${base}/backchannel-logout`, { method: 'POST' });
    expect(empty.status).to.equal(400);
  });

  it('on invalid_grant at refresh, drops its session and sends the browser to sign in again', async () => {
    const agent = new Agent();
    let home = await signInThroughDemo(agent, 'refresh@example.com', plainBase);

    // A refresh that works: rotated tokens, still signed in.
    const ok = await agent.submit(home, formFor(home.body, '/refresh'));
    expect(ok.status).to.equal(303);
    expect(ok.location).to.equal(`${plainBase}/?notice=refreshed`);
    home = await agent.get(ok.location!);
    expect(home.body).to.include('Tokens refreshed.').and.include('Signed in as <strong>refresh@example.com</strong>');

    // The person signs out of the service elsewhere (the provider's own page).
    // This site has no back-channel logout: it still thinks they are here,
    // but its refresh token (no offline_access) died with the service session.
    await signOutAtProvider(agent);
    home = await agent.get(`${plainBase}/`);
    expect(home.body).to.include('Signed in as <strong>refresh@example.com</strong>');
    const sessionsBefore = plain.sessionCount();

    const failed = once(plain.events, 'refresh-failed') as Promise<[RefreshFailedEvent]>;
    const res = await agent.submit(home, formFor(home.body, '/refresh'));
    expect(res.status).to.equal(303);
    expect(res.location).to.equal(`${plainBase}/login`);
    expect(res.headers.getSetCookie()).to.deep.equal([`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`]);
    expect(demoCookie(agent, plainBase)).to.equal(undefined);
    expect(plain.sessionCount()).to.equal(sessionsBefore - 1);
    expect((await failed)[0].error).to.equal('invalid_grant');

    // Following the redirect is a fresh sign-in: the provider asks for the address.
    const login = await agent.follow(await agent.get(res.location!), (u) => u.startsWith(plainBase));
    expect(login.status).to.equal(200);
    expect(login.body).to.include('name="email"');
    expect((await agent.get(`${plainBase}/`)).body).to.include('You are not signed in.');
  });
});
