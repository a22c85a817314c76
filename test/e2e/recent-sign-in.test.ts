/**
 * A recent sign-in for what adds access (issue 28; docs/security.md "A
 * recent sign-in for what adds access"), over HTTP as a browser without
 * JavaScript goes: unblocking a site and linking an upstream account 10
 * minutes after signing in go through the page that says why and a fresh
 * sign-in (the console's own authorization request with max_age=0, which
 * the session does not answer), back to the page of the action, where it is
 * pressed again; within 5 minutes nothing asks; what only removes access
 * never asks; and what a stolen session cookie alone gets out of it.
 * Time: the stored session's sign-in moved back (test/helpers/recent-sign-in.ts).
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t, type Locale, type MessageKey } from '../../src/i18n/index.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { bracket, processClock } from '../helpers/clock.ts';
import { authTimeOf, sessionCookie, signedInAgo } from '../helpers/recent-sign-in.ts';
import { signIn, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import type { TestUpstream } from '../helpers/upstream.ts';
import { site, startUpstreamSignIn, UPSTREAM, upstreamSteps } from '../helpers/upstream-sign-in.ts';

describe('a recent sign-in for what adds access', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;

  const world = setUp(() => startUpstreamSignIn('recent-sign-in'), (started) => ({ h, upstream, config } = started));
  const { upstreamLogin, openConsole, post, linksOf } = upstreamSteps(world);

  const TEN_MINUTES = 600;
  const age = (agent: Agent, seconds: number) => signedInAgo(h.reference.provider, sessionCookie(agent, h.issuer), seconds);
  const statusAt = async (email: string) => {
    const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
    return (await h.reference.plugin.connectedSites(accountId)).find((s) => s.clientId === site.client_id)?.status;
  };
  const signInAgainUrl = (action: string, back: string) => `${h.issuer}/console/sign-in-again?${new URLSearchParams({ action, back }).toString()}`;
  const isConsoleCallback = (u: string) => u.startsWith(`${h.issuer}/console/callback`);

  /** The page before the sign-in: its sentence, and the console's authorization request it links to. */
  async function pageBefore(agent: Agent, location: string, why: MessageKey, locale: Locale = 'en'): Promise<{ page: Response; signInHref: string }> {
    const page = await agent.get(location);
    expect(page.status).to.equal(200);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.body).to.include(`<h1>${t(locale, 'reauth.title')}</h1>`).and.include(t(locale, why));
    const href = /<a class="button primary" href="([^"]+)">/.exec(page.body)![1]!.replaceAll('&amp;', '&');
    return { page, signInHref: href };
  }

  /** Follows the page's "Sign in again": the service's own sign-in page (never the session's word), the code typed, back where the console's callback sends. */
  async function signInAgain(agent: Agent, signInHref: string, email: string): Promise<string> {
    const auth = new URL(signInHref);
    expect(auth.origin + auth.pathname).to.equal(`${h.issuer}/auth`);
    expect(auth.searchParams.get('max_age')).to.equal('0');
    expect(auth.searchParams.get('client_id')).to.equal('oidc-signout-notify-console');
    const before = await authTimeOf(h.reference.provider, sessionCookie(agent, h.issuer));
    const first = await agent.follow(await agent.get(signInHref), isConsoleCallback);
    // max_age=0 is not answered from the session: the sign-in page asks.
    expect(first.status).to.equal(200);
    expect(first.body).to.include('name="email"');
    const { res } = await throughSignInPages(h, agent, first, isConsoleCallback, email);
    const back = await agent.get(res.location!);
    expect(back.status).to.equal(303);
    expect((await authTimeOf(h.reference.provider, sessionCookie(agent, h.issuer)))!).to.be.greaterThan(before!);
    return back.location!;
  }

  it('unblocking a site in the console 10 minutes after signing in goes through the page that says why and a fresh sign-in, back to the site\'s page; within 5 minutes it does not ask', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'ula@example.com');
    await age(agent, TEN_MINUTES);
    // Blocking only removes access: it never asks.
    let page = await openConsole(agent);
    expect((await post(agent, await agent.get(`${h.issuer}/console/sites/${site.client_id}/block`), `/console/sites/${site.client_id}/block`)).location).to.equal(`${h.issuer}/console?done=blocked#notice`);
    page = await openConsole(agent);

    const asked = await post(agent, page, `/console/sites/${site.client_id}/unblock`);
    expect(asked.status).to.equal(303);
    expect(asked.location).to.equal(signInAgainUrl('unblock_site', `/console/sites/${site.client_id}`));
    expect(await statusAt('ula@example.com')).to.equal('blocked');

    const { page: before, signInHref } = await pageBefore(agent, asked.location!, 'reauth.why.unblock_site');
    // Cancel goes back to the page of the action.
    expect(before.body).to.include(`<a class="button secondary" href="/console/sites/${site.client_id}">${t('en', 'console.cancel')}</a>`);
    expect(new URL(signInHref).searchParams.get('state')).to.equal(`/console/sites/${site.client_id}`);
    const back = await signInAgain(agent, signInHref, 'ula@example.com');
    expect(back).to.equal(`${h.issuer}/console/sites/${site.client_id}`);
    // Nothing was done on the way back: the person presses Unblock again.
    expect(await statusAt('ula@example.com')).to.equal('blocked');
    const sitePage = await agent.get(back);
    const done = await post(agent, sitePage, `/console/sites/${site.client_id}/unblock`);
    expect(done.location).to.equal(`${h.issuer}/console?done=unblocked#notice`);
    expect(await statusAt('ula@example.com')).to.equal('connected');

    // Four minutes after that sign-in: blocked and unblocked again without a question.
    await age(agent, 240);
    await post(agent, await agent.get(`${h.issuer}/console/sites/${site.client_id}/block`), `/console/sites/${site.client_id}/block`);
    const again = await post(agent, await openConsole(agent), `/console/sites/${site.client_id}/unblock`);
    expect(again.location).to.equal(`${h.issuer}/console?done=unblocked#notice`);
    expect(await statusAt('ula@example.com')).to.equal('connected');
  });

  it('the JSON API\'s unblock answers 401 insufficient_user_authentication with the page to go to, and unblocks nothing', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'una@example.com');
    const json = (method: string, path: string) => agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: h.issuer });
    await age(agent, TEN_MINUTES);
    expect((await json('POST', `/sites/${site.client_id}/block`)).status).to.equal(204);
    const refused = await json('POST', `/sites/${site.client_id}/unblock`);
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('cache-control')).to.equal('no-store');
    expect(JSON.parse(refused.body)).to.deep.equal({
      error: 'insufficient_user_authentication',
      error_description: 'this adds a way into the account and needs a recent sign-in: sign in again (sign_in_again), then make the request again',
      sign_in_again: '/console/sign-in-again?action=unblock_site&back=%2Fconsole%23sites',
    });
    expect(await statusAt('una@example.com')).to.equal('blocked');
    await age(agent, 60);
    expect((await json('POST', `/sites/${site.client_id}/unblock`)).status).to.equal(204);
    expect(await statusAt('una@example.com')).to.equal('connected');
  });

  it('linking an upstream account 10 minutes after signing in asks the same way, and the upstream hears nothing until the person signed in again', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'lia@example.com');
    await age(agent, TEN_MINUTES);
    const asked = await post(agent, await openConsole(agent), `/console/linked-accounts/${UPSTREAM.id}/link`);
    expect(asked.status).to.equal(303);
    expect(asked.location).to.equal(signInAgainUrl('link_account', '/console#linked-accounts'));
    const requests = upstream.requests.length;
    const { signInHref } = await pageBefore(agent, asked.location!, 'reauth.why.link_account');
    const back = await signInAgain(agent, signInHref, 'lia@example.com');
    expect(back).to.equal(`${h.issuer}/console#linked-accounts`);
    expect(upstream.requests.length, 'nothing went to the upstream').to.equal(requests);

    upstream.people.set('lia-up', { name: 'Lia Up' });
    const link = await post(agent, await agent.get(back), `/console/linked-accounts/${UPSTREAM.id}/link`);
    expect(link.location!.startsWith(`${upstream.issuer}/auth?`)).to.equal(true);
    const linked = await upstreamLogin(agent, await agent.follow(link), 'lia-up');
    expect(linked.url).to.equal(`${h.issuer}/console?done=upstream_linked#notice`);
    const lia = (await h.reference.accounts.findByEmail('lia@example.com'))!.accountId;
    expect((await linksOf(lia)).map((l) => l.sub)).to.deep.equal(['lia-up']);
  });

  it('what only removes access never asks: remove access, from all sites, block, unlink, sign out of a device, everywhere else, everywhere, an hour after signing in', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'rex@example.com');
    // A link to unlink later, made while the sign-in is fresh.
    upstream.people.set('rex-up', { name: 'Rex Up' });
    await upstreamLogin(agent, await agent.follow(await post(agent, await openConsole(agent), `/console/linked-accounts/${UPSTREAM.id}/link`)), 'rex-up');
    await age(agent, 3600);

    const removed = await post(agent, await agent.get(`${h.issuer}/console/sites/${site.client_id}/remove-access`), `/console/sites/${site.client_id}/remove-access`);
    expect(removed.location).to.equal(`${h.issuer}/console?done=access_removed#notice`);
    expect(await statusAt('rex@example.com')).to.equal('access_removed');
    // Signed in there again from another device; then every site's access removed at once.
    const other = new Agent();
    await signIn(h, config, other, 'rex@example.com');
    const removedAll = await post(agent, await agent.get(`${h.issuer}/console/remove-access`), '/console/remove-access');
    expect(removedAll.location).to.equal(`${h.issuer}/console?done=all_access_removed#notice`);
    expect(await statusAt('rex@example.com')).to.equal('access_removed');
    const blocked = await post(agent, await agent.get(`${h.issuer}/console/sites/${site.client_id}/block`), `/console/sites/${site.client_id}/block`);
    expect(blocked.location).to.equal(`${h.issuer}/console?done=blocked#notice`);
    const unlinked = await post(agent, await openConsole(agent), `/console/linked-accounts/${UPSTREAM.id}/unlink`);
    expect(unlinked.location).to.equal(`${h.issuer}/console?done=upstream_unlinked#notice`);
    expect(await linksOf((await h.reference.accounts.findByEmail('rex@example.com'))!.accountId)).to.deep.equal([]);

    const devices = await agent.get(`${h.issuer}/console/sessions`);
    const endOne = forms(devices.body).find((f) => /^\/console\/sessions\/[^/]+\/end$/.test(f.action));
    expect(endOne, 'the other device has its Sign out').to.not.equal(undefined);
    expect((await agent.request('POST', `${h.issuer}${endOne!.action}`, endOne!.fields, { origin: h.issuer })).location).to.equal(`${h.issuer}/console/sessions?done=signed_out#notice`);
    const others = await post(agent, await agent.get(`${h.issuer}/console/sessions/end-others`), '/console/sessions/end-others');
    expect(others.location).to.equal(`${h.issuer}/console/sessions?done=signed_out_others#notice`);
    const all = await post(agent, await agent.get(`${h.issuer}/console/sessions/end-all`), '/console/sessions/end-all');
    expect(all.status).to.equal(303);
    expect(new URL(all.location!).pathname).to.equal('/session/end/success');
  });

  it('the page before the sign-in takes only its own sentences and console paths, goes straight back when the sign-in is recent, and to the sign-in when there is none', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'pat@example.com');
    // Recent: nothing to ask, back to the page of the action.
    const recent = await agent.get(signInAgainUrl('add_passkey', '/console#passkeys'));
    expect(recent.status).to.equal(303);
    expect(recent.location).to.equal(`${h.issuer}/console#passkeys`);
    // Nor is the way straight back kept by a cache: it is the session's answer of that moment.
    expect(recent.headers.get('cache-control')).to.equal('no-store');

    await age(agent, TEN_MINUTES);
    // The page names the account to sign in to again; only Delete my account's says what deleting does.
    const { page: named } = await pageBefore(agent, signInAgainUrl('unblock_site', '/console#sites'), 'reauth.why.unblock_site');
    expect(named.body).to.include('pat@example.com').and.not.include(t('en', 'reauth.explain.delete_account'));
    // An action it does not know says the general sentence; a way out of the console goes to the console.
    for (const back of ['https://evil.example/', '//evil.example', '/console/../auth', '/console/callback', '/console#a b', '/session/end']) {
      const { page, signInHref } = await pageBefore(agent, signInAgainUrl('<b>call us</b>', back), 'reauth.why.continue');
      expect(page.body).to.not.include('call us').and.not.include('evil.example');
      expect(new URL(signInHref).searchParams.get('state'), back).to.equal('/console');
      expect(page.body).to.include(`<a class="button secondary" href="/console">`);
    }
    // In the person's language (German, chosen in the console).
    expect((await post(agent, await openConsole(agent), '/console/language', { locale: 'de' })).location).to.equal(`${h.issuer}/console?done=language#notice`);
    const { page: german } = await pageBefore(agent, signInAgainUrl('add_passkey', '/console#passkeys'), 'reauth.why.add_passkey', 'de');
    expect(german.body).to.include('<html lang="de"').and.include(t('de', 'reauth.submit'));

    // Nobody signed in: the sign-in itself, back to the page of the action.
    const stranger = new Agent();
    const signIn2 = await stranger.get(signInAgainUrl('link_account', '/console#linked-accounts'));
    expect(signIn2.status).to.equal(303);
    const auth = new URL(signIn2.location!);
    expect(auth.pathname).to.equal('/auth');
    expect(auth.searchParams.get('state')).to.equal('/console#linked-accounts');
  });

  it('a sign-in exactly recentSignInSeconds (300) ago is still recent, one second more is not', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'edge@example.com');
    const url = signInAgainUrl('add_passkey', '/console#passkeys');
    // The check reads this process's clock in whole seconds: judged only when no second turned during the request.
    const at = async (seconds: number) => {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const { before, value, after } = await bracket(processClock, async () => { await age(agent, seconds); return agent.get(url); });
        if (Math.floor(before / 1000) === Math.floor(after / 1000)) return value.status;
      }
      throw new Error('a second turned during each of five tries');
    };
    expect(await at(300)).to.equal(303);
    expect(await at(301)).to.equal(200);
  });

  it('a stolen session cookie alone gets no fresh sign-in: the sign-in page asks, and a code to another address signs in another account, never this one', async () => {
    const victim = new Agent();
    await signIn(h, config, victim, 'vic@example.com');
    await age(victim, TEN_MINUTES);
    await post(victim, await victim.get(`${h.issuer}/console/sites/${site.client_id}/block`), `/console/sites/${site.client_id}/block`);
    // The thief's browser holds the victim's cookies, nothing else.
    const thief = new Agent();
    thief.cookies.set(new URL(h.issuer).host, new Map(victim.cookies.get(new URL(h.issuer).host)));
    const page = await openConsole(thief);
    const asked = await post(thief, page, `/console/sites/${site.client_id}/unblock`);
    expect(asked.location).to.equal(signInAgainUrl('unblock_site', `/console/sites/${site.client_id}`));
    const { signInHref } = await pageBefore(thief, asked.location!, 'reauth.why.unblock_site');
    const login = await thief.follow(await thief.get(signInHref), isConsoleCallback);
    expect(login.body).to.include('name="email"');
    // The thief's own address: the code goes there, and signs in the thief's own account.
    const letters = h.smtp.letters.length;
    const sent = await thief.follow(await thief.submit(login, formFor(login.body, '/email'), { email: 'thief@example.com' }), isConsoleCallback);
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= letters && JSON.stringify(l.to).includes('thief@example.com'));
    expect(h.smtp.letters.slice(letters).every((l) => !JSON.stringify(l.to).includes('vic@example.com'))).to.equal(true);
    const code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
    let res = await thief.submit(sent, formFor(sent.body, '/code'), { code });
    // oidc-provider signs the victim out before signing another account in (its end-session form, posted by script in a browser).
    for (let hops = 0; hops < 10 && !(res.location && isConsoleCallback(res.location)); hops += 1) {
      res = res.location ? await thief.get(res.location) : await thief.submit(res, forms(res.body)[0]!);
    }
    expect(res.location && isConsoleCallback(res.location), res.body.slice(0, 500)).to.equal(true);
    const session = await h.reference.provider.Session.find(sessionCookie(thief, h.issuer));
    expect(session?.accountId).to.equal((await h.reference.accounts.findByEmail('thief@example.com'))!.accountId);
    // The victim's site stays blocked, and the victim's form is no form of the thief's session.
    expect(await statusAt('vic@example.com')).to.equal('blocked');
    const replay = await thief.request('POST', `${h.issuer}/console/sites/${site.client_id}/unblock`, formFor(page.body, `/console/sites/${site.client_id}/unblock`).fields, { origin: h.issuer });
    expect(replay.status).to.equal(400);
    expect(replay.body).to.include(t('en', 'error.form_expired'));
    expect(await statusAt('vic@example.com')).to.equal('blocked');
  });
});
