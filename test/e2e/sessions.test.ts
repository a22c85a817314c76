import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1';

type SessionJson = { id: string; current: boolean; browser?: string; os?: string; firstSeenAt: string; lastSeenAt: string; expiresAt: string; sites: { clientId: string; name: string }[] };

/** Where the person is signed in: every service session, and signing out of one, of the others, of all. */
describe('sessions and devices (console)', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let site: ReturnType<typeof siteClient>;
  let config: oidc.Configuration;

  before(async () => {
    receiver = await startReceiver();
    site = siteClient('dev-site', { client_name: 'Device Site', backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    h = await startHarness('sessions', { clients: [site], allowPrivateFetchHosts: ['127.0.0.1'] });
    config = await discover(h, site);
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  function browser(userAgent: string): Agent {
    const agent = new Agent();
    agent.headers['user-agent'] = userAgent;
    return agent;
  }

  async function api(agent: Agent, method: string, path: string, headers: Record<string, string> = { origin: h.issuer }) {
    const res = await agent.request(method, `${h.issuer}/console/api${path}`, undefined, { accept: 'application/json', ...headers });
    return { status: res.status, body: res.body ? JSON.parse(res.body) as unknown : undefined };
  }

  const list = async (agent: Agent) => (await api(agent, 'GET', '/sessions')).body as SessionJson[];

  it('lists both browsers of the person, in plain words; signing out of the other one ends its site\'s access and tells the site', async () => {
    const laptop = browser(FIREFOX_WINDOWS);
    const phone = browser(SAFARI_IPHONE);
    const atLaptop = await signIn(h, config, laptop, 'two@example.com');
    const atPhone = await signIn(h, config, phone, 'two@example.com');

    const seen = await list(laptop);
    expect(seen).to.have.length(2);
    const [here, there] = [seen.find((s) => s.current)!, seen.find((s) => !s.current)!];
    expect(here).to.include({ browser: 'Firefox', os: 'Windows' });
    expect(there).to.include({ browser: 'Safari', os: 'iPhone' });
    for (const s of seen) {
      expect(s.sites).to.deep.equal([{ clientId: 'dev-site', name: 'Device Site' }]);
      expect(Date.parse(s.firstSeenAt)).to.be.closeTo(Date.now(), 60_000);
      expect(Date.parse(s.lastSeenAt)).to.be.at.least(Date.parse(s.firstSeenAt));
      expect(Date.parse(s.expiresAt)).to.be.greaterThan(Date.now());
    }
    // The phone sees the same two, from its side.
    expect((await list(phone)).map((s) => [s.id, s.current])).to.have.deep.members([[here.id, false], [there.id, true]]);

    const before = receiver.tokens.length;
    expect((await api(laptop, 'DELETE', `/sessions/${there.id}`)).status).to.equal(204);

    expect(await oauthError(oidc.refreshTokenGrant(config, atPhone.tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await oidc.refreshTokenGrant(config, atLaptop.tokens.refresh_token!)).access_token).to.be.a('string');
    const sent = receiver.tokens.slice(before);
    expect(sent).to.have.length(1);
    expect(await receiver.verify(sent[0]!, h.issuer, 'dev-site')).to.include({ sub: atPhone.tokens.claims()!.sub, sid: atPhone.tokens.claims()!.sid });
    // The phone is signed out of the service; the laptop lists itself alone.
    expect((await api(phone, 'GET', '/sessions')).status).to.equal(401);
    expect((await list(laptop)).map((s) => s.id)).to.deep.equal([here.id]);
    // Gone is gone: 404 the second time, as for an id that was never one.
    expect(await api(laptop, 'DELETE', `/sessions/${there.id}`)).to.deep.include({ status: 404, body: { error: 'not_found', error_description: 'no such session' } });
  });

  it('keeps offline access, as /session/end does, and never ends someone else\'s session', async () => {
    const mine = browser(FIREFOX_WINDOWS);
    const other = browser(SAFARI_IPHONE);
    const offline = await signIn(h, config, mine, 'offline@example.com', { scope: 'openid email offline_access', prompt: 'consent' });
    await signIn(h, config, other, 'someone-else@example.com');
    const theirs = (await list(other))[0]!;
    expect(await api(mine, 'DELETE', `/sessions/${theirs.id}`)).to.deep.include({ status: 404 });
    expect((await list(other))).to.have.length(1);
    expect((await api(mine, 'DELETE', `/sessions/${theirs.id}`, {})).status).to.equal(403);

    const [me] = await list(mine);
    expect((await api(mine, 'DELETE', `/sessions/${me!.id}`)).status).to.equal(204);
    // The grant with offline_access outlives the session; the session is gone.
    expect((await oidc.refreshTokenGrant(config, offline.tokens.refresh_token!)).access_token).to.be.a('string');
    expect((await api(mine, 'GET', '/sessions')).status).to.equal(401);
  });

  it('signs out everywhere else, then everywhere, through the pages, each after its confirmation', async () => {
    const agents = [browser(FIREFOX_WINDOWS), browser(SAFARI_IPHONE), new Agent()];
    const signIns = [];
    for (const agent of agents) signIns.push(await signIn(h, config, agent, 'three@example.com'));
    const [laptop] = agents;

    const page = await laptop!.get(`${h.issuer}/console/sessions`);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<h3 id="session-0">Firefox on Windows</h3>');
    expect(page.body).to.include('<span class="badge badge-accent">This device</span>');
    expect(page.body).to.include('Safari on iPhone');
    const confirm = await laptop!.get(`${h.issuer}/console/sessions/end-others`);
    expect(confirm.body).to.include('<h1>Sign out everywhere else?</h1>');
    const done = await laptop!.request('POST', `${h.issuer}/console/sessions/end-others`, formFor(confirm.body, '/console/sessions/end-others').fields, { origin: h.issuer });
    expect(done.location).to.equal(`${h.issuer}/console/sessions?done=signed_out_others#notice`);
    const after = await laptop!.get(done.location!);
    expect(after.body).to.include('<p id="notice" class="notice" role="status" tabindex="-1">You are signed out everywhere else.');
    expect(await oauthError(oidc.refreshTokenGrant(config, signIns[1]!.tokens.refresh_token!))).to.equal('invalid_grant');
    expect(await oauthError(oidc.refreshTokenGrant(config, signIns[2]!.tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await list(laptop!))).to.have.length(1);

    const all = await laptop!.get(`${h.issuer}/console/sessions/end-all`);
    expect(all.body).to.include('<h1>Sign out everywhere?</h1>');
    const out = await laptop!.request('POST', `${h.issuer}/console/sessions/end-all`, formFor(all.body, '/console/sessions/end-all').fields, { origin: h.issuer });
    expect(out.location).to.equal(`${h.issuer}/session/end/success`);
    expect((await laptop!.get(out.location!)).body).to.include('You are signed out');
    expect(await oauthError(oidc.refreshTokenGrant(config, signIns[0]!.tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await api(laptop!, 'GET', '/sessions')).status).to.equal(401);
  });

  it('signs out everywhere through the API; a form without the person\'s token changes nothing', async () => {
    const one = browser(FIREFOX_WINDOWS);
    const two = browser(SAFARI_IPHONE);
    await signIn(h, config, one, 'api@example.com');
    await signIn(h, config, two, 'api@example.com');
    const forged = await one.request('POST', `${h.issuer}/console/sessions/end-all`, { csrf: 'nope' }, { origin: h.issuer });
    expect(forged.status).to.equal(400);
    expect(await list(two)).to.have.length(2);
    expect(await api(one, 'POST', '/sessions/end-others')).to.deep.include({ status: 200, body: { ended: 1 } });
    expect((await api(two, 'GET', '/sessions')).status).to.equal(401);
    expect(await api(one, 'POST', '/sessions/end-all')).to.deep.include({ status: 200, body: { ended: 1 } });
    expect((await api(one, 'GET', '/sessions')).status).to.equal(401);
  });
});
