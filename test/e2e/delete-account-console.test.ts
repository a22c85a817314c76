/**
 * The person's side of deleting (docs/console.md "Your account"), over HTTP
 * as a browser without JavaScript goes: the data copy holds every site,
 * setting and inbox entry the console's JSON API shows; "Delete my account"
 * asks, needs a recent sign-in (the page that says why and a fresh sign-in,
 * back to the question), deletes, and ends on a page saying so; the old
 * session no longer opens the console and the site's tokens are dead.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { sessionCookie, signedInAgo } from '../helpers/recent-sign-in.ts';
import { discover, notifyAs, oauthError, signIn, siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';

describe('the console: a copy of your data, Delete my account', function () {
  this.timeout(60_000);
  let h: Harness;
  let receiver: BackchannelReceiver;
  const site = siteClient('del-console', { client_name: 'Shop' });
  const other = siteClient('del-console-2', { client_name: 'Forum' });
  let config: oidc.Configuration;
  let config2: oidc.Configuration;

  before(async () => {
    receiver = await startReceiver();
    site.backchannel_logout_uri = receiver.url;
    h = await startHarness('delete-account-console', { clients: [site, other], allowPrivateFetchHosts: ['127.0.0.1'] });
    config = await discover(h, site);
    config2 = await discover(h, other);
  });
  after(async () => {
    await h?.close();
    await receiver?.close();
  });

  const api = async (agent: Agent, method: string, path: string) => {
    const res = await agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: h.issuer });
    return { status: res.status, headers: res.headers, body: res.body ? JSON.parse(res.body) as Record<string, unknown> & unknown[] : undefined };
  };
  const post = (agent: Agent, page: Response, suffix: string) =>
    agent.request('POST', new URL(formFor(page.body, suffix).action, page.url).href, formFor(page.body, suffix).fields, { origin: h.issuer });

  it('the data copy holds every site, setting, inbox entry and session the console shows; it is an attachment, never cached, and only for the signed-in person', async () => {
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'copy@example.com');
    await signIn(h, config2, agent, 'copy@example.com');
    const sub = tokens.claims()!.sub;
    // More than the console's page of 20: the copy reads every page.
    const titles = ['One', 'Two', 'Three', ...Array.from({ length: 18 }, (_, i) => `More ${i + 1}`)];
    for (const title of titles) expect((await notifyAs(h, site, { sub, category: 'transactional', title, body: `Message ${title}` })).status).to.equal(202);
    await h.reference.plugin.senders.update(sub, 'del-console-2', { muted: true });
    await h.reference.plugin.preferences.setLocale(sub, 'de');
    // Remove access at the shop: its logout is shown on the console ("Recent sign-outs at sites").
    expect(await h.reference.plugin.removeAccess(sub, 'del-console')).to.equal('removed');

    const copy = await api(agent, 'GET', '/export');
    expect(copy.status).to.equal(200);
    expect(copy.headers.get('content-disposition')).to.equal('attachment; filename="my-data.json"');
    expect(copy.headers.get('cache-control')).to.equal('no-store');
    expect(copy.headers.get('content-type')).to.match(/^application\/json/);
    const data = copy.body as unknown as Record<string, unknown>;
    expect(data.format).to.equal('oidc-signout-notify/data-copy/1');
    expect(data.accountId).to.equal(sub);
    expect(data.sites).to.deep.equal((await api(agent, 'GET', '/sites')).body);
    expect(data.senders).to.deep.equal((await api(agent, 'GET', '/senders')).body);
    expect(data.sessions).to.deep.equal((await api(agent, 'GET', '/sessions')).body);
    expect(data.language).to.equal('de');
    const firstPage = ((await api(agent, 'GET', '/inbox')).body as unknown as { items: unknown[] }).items;
    expect(firstPage).to.have.length(20);
    expect((data.inbox as unknown[]).slice(0, 20)).to.deep.equal(firstPage);
    expect((data.inbox as { title: string }[]).map((m) => m.title)).to.deep.equal([...titles].reverse());
    expect((data.sites as { clientId: string }[]).map((s) => s.clientId).sort()).to.deep.equal(['del-console', 'del-console-2']);
    expect((data.logouts as { clientId: string; state: string }[]).map(({ clientId, state }) => ({ clientId, state }))).to.deep.equal([{ clientId: 'del-console', state: 'signed_out' }]);
    expect((data.senders as { clientId: string; muted: boolean }[]).find((s) => s.clientId === 'del-console-2')).to.include({ muted: true });

    // Without the session: 401 as every console API route.
    const stranger = await new Agent().request('GET', `${h.issuer}/console/api/export`, undefined, { accept: 'application/json' });
    expect(stranger.status).to.equal(401);
    expect(JSON.parse(stranger.body)).to.have.property('error', 'login_required');
  });

  it('Delete my account asks, needs a recent sign-in, deletes, and says it is done; the session and the site\'s tokens are gone', async () => {
    const agent = new Agent();
    const email = 'leaving@example.com';
    const { tokens } = await signIn(h, config, agent, email);
    const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
    const consolePage = await agent.follow(await agent.get(`${h.issuer}/console`));
    expect(consolePage.body).to.include('href="/console/api/export"').and.include('href="/console/delete-account"');
    expect(consolePage.body).to.include(t('en', 'console.account.export')).and.include(t('en', 'console.account.delete'));

    // Ten minutes later: the question, then the page that asks for a fresh sign-in; nothing deleted.
    await signedInAgo(h.reference.provider, sessionCookie(agent, h.issuer), 600);
    const question = await agent.get(`${h.issuer}/console/delete-account`);
    expect(question.status).to.equal(200);
    expect(question.headers.get('cache-control')).to.equal('no-store');
    expect(question.body).to.include(`<h1>${t('en', 'console.delete.title')}</h1>`).and.include(t('en', 'console.delete.submit'));
    const asked = await post(agent, question, '/console/delete-account');
    expect(asked.status).to.equal(303);
    expect(asked.location).to.equal(`${h.issuer}/console/sign-in-again?${new URLSearchParams({ action: 'delete_account', back: '/console/delete-account' }).toString()}`);
    expect(await h.reference.accounts.findByEmail(email)).to.not.equal(undefined);
    const why = await agent.get(new URL(asked.location!, h.issuer).href);
    expect(why.body).to.include(t('en', 'reauth.why.delete_account')).and.include(t('en', 'reauth.explain.delete_account'));
    const signInHref = /<a class="button primary" href="([^"]+)">/.exec(why.body)![1]!.replaceAll('&amp;', '&');
    const isConsoleCallback = (u: string) => u.startsWith(`${h.issuer}/console/callback`);
    const first = await agent.follow(await agent.get(signInHref), isConsoleCallback);
    const { res } = await throughSignInPages(h, agent, first, isConsoleCallback, email);
    const back = await agent.get(res.location!);
    expect(back.location).to.equal(`${h.issuer}/console/delete-account`);

    // A form from another origin is refused.
    const again = await agent.get(`${h.issuer}/console/delete-account`);
    const foreign = await agent.request('POST', `${h.issuer}/console/delete-account`, formFor(again.body, '/console/delete-account').fields, { origin: 'https://evil.example' });
    expect(foreign.status).to.equal(403);
    const before = receiver.tokens.length;
    const done = await post(agent, again, '/console/delete-account');
    expect(done.status).to.equal(303);
    expect(done.location).to.equal(`${h.issuer}/console/account-deleted?lang=en`);
    const page = await agent.get(new URL(done.location!, h.issuer).href);
    expect(page.status).to.equal(200);
    expect(page.body).to.include(`<h1>${t('en', 'console.delete.done_title')}</h1>`);

    // Gone: the account, the site's tokens (its logout token came), the console's session.
    expect(await h.reference.accounts.findByEmail(email)).to.equal(undefined);
    expect(await h.reference.plugin.connectedSites(accountId)).to.deep.equal([]);
    expect(receiver.tokens.length - before).to.equal(1);
    expect(await receiver.verify(receiver.tokens.at(-1)!, h.issuer, 'del-console')).to.include({ sub: accountId });
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    const consoleAfter = await agent.get(`${h.issuer}/console`);
    expect(consoleAfter.status).to.equal(303);
    expect((await api(agent, 'GET', '/sites')).status).to.equal(401);
    // Signing in with the address again makes a new, empty account.
    await signIn(h, config, new Agent(), email);
    const fresh = (await h.reference.accounts.findByEmail(email))!.accountId;
    expect(fresh).to.not.equal(accountId);
  });
});
