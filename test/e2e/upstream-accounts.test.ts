/**
 * Social sign-in (issue 15 item 2): which account an upstream's person lands in (an unverified
 * address never links, each source's own email_verified; a verified one of an existing account
 * asks first: upstream-link-first.test.ts), the console's linked
 * accounts (link, unlink, never the last way in), an upstream that fails, and a log without codes or states.
 */
import { createHmac } from 'node:crypto';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { createCsrf } from '../../src/http/csrf.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { discover, notifyAs, signIn, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import type { TestUpstream } from '../helpers/upstream.ts';
import { claimsOf, expectCleanLog, REDIRECT, site, startUpstreamSignIn, UPSTREAM, upstreamSteps } from '../helpers/upstream-sign-in.ts';

describe('social sign-in through an upstream OpenID Connect provider (openid-client)', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;

  const world = setUp(() => startUpstreamSignIn('upstream-accounts'), (started) => ({ h, upstream, config } = started));
  const { loginPage, toUpstream, upstreamLogin, signInThroughUpstream, openConsole, post, linksOf } = upstreamSteps(world);

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

  it('logs sign-ins and failures without codes, states, tokens or the upstream\'s identifiers', () => {
    expectCleanLog(world());
  });
});
