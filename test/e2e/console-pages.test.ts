import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';

const shop = siteClient('p-shop', { client_name: 'Shop <b>&</b>', client_uri: 'https://shop.example' });
const org = siteClient('p-org', { client_name: 'Intranet' });

/** The console's pages as a browser without JavaScript uses them. */
describe('console pages (/console)', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('console-pages', {
      clients: [shop, org],
      organizations: [{ id: 'acme', name: 'Acme', admins: ['boss@p.example'], members: ['worker@p.example', 'leaver@p.example'], clients: ['p-org'] }],
    });
  });
  after(() => h.close());

  /** Opens the console; someone not signed in signs in there first (no consent page) and lands back on `path`. */
  async function openConsole(agent: Agent, email: string, path = '/console'): Promise<Response> {
    const start = await agent.get(`${h.issuer}${path}`);
    if (start.status === 200) return start;
    expect(start.status).to.equal(303);
    expect(start.location).to.match(new RegExp(`^${h.issuer}/auth\\?client_id=oidc-signout-notify-console&`));
    const { res, pages } = await throughSignInPages(h, agent, start, (u) => u.startsWith(`${h.issuer}/console/callback`), email);
    expect(pages.some((p) => p.body.includes('/confirm"')), 'no consent page for the console').to.equal(false);
    const page = await agent.follow(await agent.get(res.location!));
    expect(page.url).to.equal(`${h.issuer}${path}`);
    expect(page.status).to.equal(200);
    return page;
  }

  const submit = (agent: Agent, page: Response, suffix: string, extra: Record<string, string> = {}) =>
    agent.request('POST', new URL(formFor(page.body, suffix).action, page.url).href, { ...formFor(page.body, suffix).fields, ...extra }, { origin: h.issuer });

  it('sends a stranger to sign in and back; the console itself is never a connected site', async () => {
    const agent = new Agent();
    await signIn(h, await discover(h, shop), agent, 'first@p.example');
    const fresh = new Agent();
    const page = await openConsole(fresh, 'first@p.example');
    expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.body).to.include('Shop &lt;b&gt;&amp;&lt;/b&gt;');
    expect(page.body).to.not.include('oidc-signout-notify-console');
    const sites = await h.reference.plugin.connectedSites((await h.reference.accounts.findByEmail('first@p.example'))!.accountId);
    expect(sites.map((s) => s.clientId)).to.deep.equal(['p-shop']);
  });

  it('blocks a site after a confirmation that says what happens, and unblocks it', async () => {
    const agent = new Agent();
    await signIn(h, await discover(h, shop), agent, 'block@p.example');
    const page = await openConsole(agent, 'block@p.example');
    const link = /href="(\/console\/sites\/p-shop\/block)"/.exec(page.body)?.[1];
    expect(link).to.equal('/console/sites/p-shop/block');
    const confirm = await agent.get(`${h.issuer}${link}`);
    expect(confirm.status).to.equal(200);
    const done = await submit(agent, confirm, '/console/sites/p-shop/block');
    expect(done.status).to.equal(303);
    expect(done.location).to.equal(`${h.issuer}/console?done=blocked#notice`);
    const after = await agent.get(done.location!);
    expect(forms(after.body).map((f) => f.action)).to.include('/console/sites/p-shop/unblock');
    const id = (await h.reference.accounts.findByEmail('block@p.example'))!.accountId;
    expect((await h.reference.plugin.sites.get(id, 'p-shop'))!.status).to.equal('blocked');

    const unblocked = await submit(agent, after, '/console/sites/p-shop/unblock');
    expect(unblocked.location).to.equal(`${h.issuer}/console?done=unblocked#notice`);
    expect((await h.reference.plugin.sites.get(id, 'p-shop'))!.status).to.equal('connected');
  });

  it('saves a sender’s settings from the form, and refuses a form without its CSRF token or from elsewhere', async () => {
    const agent = new Agent();
    await signIn(h, await discover(h, shop), agent, 'sender@p.example');
    const page = await openConsole(agent, 'sender@p.example');
    const saved = await submit(agent, page, '/console/senders/p-shop', { muted: 'on', promotions: 'account_and_email' });
    expect(saved.location).to.equal(`${h.issuer}/console?done=saved#notice`);
    const id = (await h.reference.accounts.findByEmail('sender@p.example'))!.accountId;
    expect(await h.reference.plugin.senders.get(id, 'p-shop')).to.deep.equal({ muted: true, categories: { transactional: 'account_and_email', product: 'account', promotions: 'account_and_email' } });

    const noCsrf = await agent.request('POST', `${h.issuer}/console/senders/p-shop`, { muted: 'on' }, { origin: h.issuer });
    expect(noCsrf.status).to.equal(400);
    const crossSite = await agent.request('POST', `${h.issuer}/console/senders/p-shop`, formFor(page.body, '/console/senders/p-shop').fields, { origin: 'https://evil.example' });
    expect(crossSite.status).to.equal(403);
    // Someone else's token is no token.
    const other = new Agent();
    await signIn(h, await discover(h, shop), other, 'sender2@p.example');
    const otherPage = await openConsole(other, 'sender2@p.example');
    const stolen = await agent.request('POST', `${h.issuer}/console/senders/p-shop`, { ...formFor(otherPage.body, '/console/senders/p-shop').fields }, { origin: h.issuer });
    expect(stolen.status).to.equal(400);
    expect(await h.reference.plugin.senders.get(id, 'p-shop')).to.deep.include({ muted: true });
  });

  it('keeps the language the person picks, for the console and for letters', async () => {
    const agent = new Agent();
    await signIn(h, await discover(h, shop), agent, 'lang@p.example');
    const page = await openConsole(agent, 'lang@p.example');
    expect(page.body).to.match(/<html lang="en"/);
    const done = await submit(agent, page, '/console/language', { locale: 'fr' });
    expect(done.location).to.equal(`${h.issuer}/console?done=language#notice`);
    expect((await agent.get(done.location!)).body).to.match(/<html lang="fr" dir="ltr"/);
    const id = (await h.reference.accounts.findByEmail('lang@p.example'))!.accountId;
    expect(await h.reference.plugin.preferences.locale(id)).to.equal('fr');
    expect((await submit(agent, page, '/console/language', { locale: 'xx' })).status).to.equal(400);
  });

  it('shows an organization’s members to its admins only, and removes one after a confirmation', async () => {
    const worker = new Agent();
    await signIn(h, await discover(h, org), worker, 'worker@p.example');
    const workerId = (await h.reference.accounts.findByEmail('worker@p.example'))!.accountId;
    // A member sees what the organization gives them, not its members.
    const mine = await worker.get(`${h.issuer}/console/orgs/acme`);
    expect(mine.status).to.equal(200);
    expect(mine.body).to.include(t('en', 'console.org.member_lead', { orgName: '<bdi>Acme</bdi>', serviceName: 'Sign-in service' }));
    expect(mine.body).to.not.include('boss@p.example');
    expect((await worker.get(`${h.issuer}/console/orgs/acme/members/${workerId}/remove`)).status).to.equal(404);

    const boss = new Agent();
    const page = await openConsole(boss, 'boss@p.example', '/console/orgs/acme');
    expect(page.body).to.include('worker@p.example');
    const confirm = await boss.get(`${h.issuer}/console/orgs/acme/members/${workerId}/remove`);
    expect(confirm.status).to.equal(200);
    const done = await submit(boss, confirm, `/console/orgs/acme/members/${workerId}/remove`);
    expect(done.location).to.equal(`${h.issuer}/console/orgs/acme?done=removed#notice`);
    expect(((await h.reference.plugin.organizations.members('acme')).find((m) => m.accountId === workerId))!.removedAt).to.be.a('number');
    const console = await boss.get(`${h.issuer}/console`);
    expect(console.body).to.include('href="/console/orgs/acme"');
  });

  it('tells a removed member that the organization removed their access: no Connected, no Block, no sender settings', async () => {
    const leaver = new Agent();
    leaver.headers.origin = h.issuer;
    await signIn(h, await discover(h, org), leaver, 'leaver@p.example');
    await signIn(h, await discover(h, shop), leaver, 'leaver@p.example');
    const leaverId = (await h.reference.accounts.findByEmail('leaver@p.example'))!.accountId;
    const before = await openConsole(leaver, 'leaver@p.example');
    expect(before.body).to.include('href="/console/sites/p-org/block"');
    expect(before.body).to.include('action="/console/senders/p-org"');

    expect(await h.reference.plugin.removeMember('acme', leaverId)).to.equal('removed');
    const page = await leaver.get(`${h.issuer}/console`);
    const tile = /<li class="tile[^"]*">(?:(?!<\/li>)[\s\S])*?Intranet[\s\S]*?<\/li>/.exec(page.body)![0];
    expect(tile).to.include(`<span class="badge badge-neutral">${t('en', 'console.sites.removed')}</span>`);
    expect(tile).to.include(t('en', 'console.sites.removed_explain', { orgName: '<bdi>Acme</bdi>', siteName: '<bdi>Intranet</bdi>' }));
    expect(tile).to.not.include(t('en', 'console.sites.connected'));
    expect(page.body).to.not.include('/console/sites/p-org/block');
    expect(page.body).to.not.include('action="/console/senders/p-org"');
    // The shop, of no organization, is untouched.
    expect(page.body).to.include('href="/console/sites/p-shop/block"');
    expect((await leaver.request('POST', `${h.issuer}/console/senders/p-org`, { ...formFor(before.body, '/console/senders/p-org').fields })).status).to.equal(404);

    const api = await (await fetch(`${h.issuer}/console/api/sites`, { headers: { cookie: [...leaver.cookies.get(new URL(h.issuer).host)!].map(([k, v]) => `${k}=${v}`).join('; ') } })).json() as { clientId: string; status: string; removedBy?: string }[];
    expect(api.find((x) => x.clientId === 'p-org')).to.include({ status: 'removed', removedBy: 'Acme' });
    expect(api.find((x) => x.clientId === 'p-shop')).to.include({ status: 'connected' });

    // The organization's page says so, with the date.
    const orgPage = await leaver.get(`${h.issuer}/console/orgs/acme`);
    expect(orgPage.status).to.equal(200);
    expect(orgPage.body).to.match(new RegExp(t('en', 'console.org.member_removed', { orgName: '<bdi>Acme</bdi>', date: '<time datetime="[^"]+">[^<]+</time>' })));
    expect(page.body).to.include('<span class="badge badge-danger">Removed</span>');
  });

  it('shows no organization page to someone outside it (not found)', async () => {
    const stranger = new Agent();
    await signIn(h, await discover(h, shop), stranger, 'stranger@p.example');
    const res = await stranger.get(`${h.issuer}/console/orgs/acme`);
    expect(res.status).to.equal(404);
    expect(res.body).to.include(`<h1>${t('en', 'error.not_found')}</h1>`);
    expect(res.body).to.include(`href="${h.issuer}/console"`);
  });
});
