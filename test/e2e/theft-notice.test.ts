import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { discover, oauthError, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Item = { id: string; from?: string; notice?: string; clientId: string; siteName: string; category: string; title: string; body: string; read: boolean };

/** The person is told when a sign-in of theirs was stolen (refresh token reuse), in their language, once per window. */
describe('theft notice: the person is told when a refresh token is reused', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let site: ReturnType<typeof siteClient>;
  let config: oidc.Configuration;
  const SITE = 'Northwind Shop';
  // An RFC 2047 encoded-word of "Verify now at evil.com" as a site's name.
  const ENCODED_WORD = '=?UTF-8?B?VmVyaWZ5IG5vdyBhdCBldmlsLmNvbQ==?=';
  const encodedSite = siteClient('theft-encoded', { client_name: ENCODED_WORD });

  before(async () => {
    receiver = await startReceiver();
    site = siteClient('theft-site', { client_name: SITE, backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    h = await startHarness('theft', { clients: [site, encodedSite], allowPrivateFetchHosts: ['127.0.0.1'] });
    config = await discover(h, site);
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  async function inbox(agent: Agent): Promise<Item[]> {
    const res = await agent.request('GET', `${h.issuer}/console/api/inbox`, undefined, { accept: 'application/json' });
    return (JSON.parse(res.body) as { items: Item[] }).items;
  }

  const noticesTo = (email: string, subject: string) => h.smtp.letters.filter((l) => JSON.stringify(l.to).includes(email) && l.subject === subject);

  /** Signs in, refreshes twice (the site got its answers), then the old token comes back: theft. */
  async function steal(agent: Agent, email: string, at = config) {
    const { tokens } = await signIn(h, at, agent, email);
    const first = await oidc.refreshTokenGrant(at, tokens.refresh_token!);
    const second = await oidc.refreshTokenGrant(at, first.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(at, tokens.refresh_token!))).to.equal('invalid_grant');
    return { tokens, second };
  }

  it('puts the service\'s notice in the inbox and sends a letter in the person\'s language; the site loses every grant of the person and is told', async () => {
    const email = 'dieb@example.com';
    const phone = new Agent();
    phone.acceptLanguage = 'de';
    const laptop = new Agent();
    laptop.acceptLanguage = 'de';
    const other = await signIn(h, config, laptop, email);
    const before = receiver.tokens.length;
    const { second, tokens } = await steal(phone, email);
    const sub = tokens.claims()!.sub;

    const subject = t('de', 'theft.subject', { siteName: SITE, serviceName: 'Sign-in service' });
    const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    expect(letter.headers.get('content-language')).to.equal('de');
    expect(letter.headers.get('auto-submitted')).to.equal('auto-generated');
    expect(letter.headers.has('list-unsubscribe')).to.equal(false);
    expect(letter.text).to.include(t('de', 'theft.done', { siteName: SITE }));
    // What to check ends with the reference provider's sentence on how its people sign in.
    expect(letter.text).to.include(`- ${t('de', 'login.check_email')}`);
    expect(letter.text).to.include(`${h.issuer}/console/sessions`);
    // No token in the letter.
    for (const value of [tokens.refresh_token!, second.refresh_token!, tokens.access_token]) expect(letter.text).to.not.include(value);

    // The laptop's sign-in after the phone's was from a new browser: that notice too, the theft's on top.
    const items = await inbox(phone);
    expect(items.map((i) => i.notice)).to.deep.equal(['theft', 'new_browser']);
    expect(items[0]).to.include({ from: 'service', clientId: 'theft-site', siteName: 'Sign-in service', category: 'security', read: false, title: t('de', 'theft.title', { siteName: SITE }) });
    expect(items[0]!.body).to.include(t('de', 'theft.check'));

    // Every grant of the person at the site went (the other device's too), and the site heard of both sessions.
    expect(await oauthError(oidc.refreshTokenGrant(config, other.tokens.refresh_token!))).to.equal('invalid_grant');
    expect(await oauthError(oidc.refreshTokenGrant(config, second.refresh_token!))).to.equal('invalid_grant');
    for (let i = 0; i < 50 && receiver.tokens.length - before < 2; i += 1) await sleep(20);
    const told = await Promise.all(receiver.tokens.slice(before).map((token) => receiver.verify(token, h.issuer, 'theft-site')));
    expect(told.map((p) => p.sub)).to.deep.equal([sub, sub]);
    expect(told.map((p) => p.sid).sort()).to.deep.equal([other.tokens.claims()!.sid, tokens.claims()!.sid].sort());
  });

  it('tells the person of a reused authorization code too (oidc-provider names no code on that request: the adapter read it)', async () => {
    const email = 'code-thief@example.com';
    const agent = new Agent();
    await signIn(h, config, agent, email);
    // Signed in already: the next authorization comes straight back with a code.
    const verifier = oidc.randomPKCECodeVerifier();
    const redirectUri = site.redirect_uris![0]!;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid email', state: 's1',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const callback = new URL((await agent.follow(await agent.get(url.href), (u) => u.startsWith(redirectUri))).location!);
    await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's1' });
    expect(await oauthError(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's1' }))).to.equal('invalid_grant');
    const subject = t('en', 'theft.subject', { siteName: SITE, serviceName: 'Sign-in service' });
    await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    const items = await inbox(agent);
    expect(items.map((i) => [i.from, i.category])).to.deep.equal([['service', 'security']]);
  });

  it('names a site whose name is an encoded-word as written in the Subject, not decoded', async () => {
    const email = 'encoded-thief@example.com';
    await steal(new Agent(), email, await discover(h, encodedSite));
    const letter = await h.smtp.waitFor((l) => JSON.stringify(l.to).includes(email) && !/\b\d{6}\b/.test(l.subject ?? ''));
    expect(letter.subject).to.equal(t('en', 'theft.subject', { siteName: ENCODED_WORD, serviceName: 'Sign-in service' }));
  });

  it('a second reuse at the same site within the window gives no second letter and no second entry', async () => {
    const email = 'twice@example.com';
    const agent = new Agent();
    await steal(agent, email);
    const subject = t('en', 'theft.subject', { siteName: SITE, serviceName: 'Sign-in service' });
    await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    await steal(agent, email);
    await sleep(300);
    expect(noticesTo(email, subject)).to.have.length(1);
    expect((await inbox(agent)).filter((i) => i.from === 'service')).to.have.length(1);
  });

  it('says nothing for a retry within the reuse leeway: the same answer again is no theft', async () => {
    const email = 'retry@example.com';
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, email);
    const first = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const again = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(again.refresh_token).to.equal(first.refresh_token);
    await sleep(300);
    expect(h.smtp.letters.filter((l) => JSON.stringify(l.to).includes(email) && !/\b\d{6}\b/.test(l.subject ?? ''))).to.deep.equal([]);
    expect(await inbox(agent)).to.deep.equal([]);
  });

  it('tells the person once when ten refreshes race with one token and the leeway is off', async () => {
    const raceSite = siteClient('race-site', { client_name: 'Race Site' });
    const race = await startHarness('theft-race', { clients: [raceSite], plugin: { refreshReuseLeeway: 0 } });
    try {
      const raceConfig = await discover(race, raceSite);
      const agent = new Agent();
      const { tokens } = await signIn(race, raceConfig, agent, 'race@example.com');
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => oidc.refreshTokenGrant(raceConfig, tokens.refresh_token!)));
      expect(results.filter((r) => r.status === 'rejected').length).to.be.at.least(9);
      const subject = t('en', 'theft.subject', { siteName: 'Race Site', serviceName: 'Sign-in service' });
      await race.smtp.waitFor((l) => l.subject === subject);
      await sleep(300);
      expect(race.smtp.letters.filter((l) => l.subject === subject)).to.have.length(1);
      const res = await agent.request('GET', `${race.issuer}/console/api/inbox`, undefined, { accept: 'application/json' });
      expect((JSON.parse(res.body) as { items: Item[] }).items.map((i) => [i.from, i.category])).to.deep.equal([['service', 'security']]);
    } finally {
      await race.close();
    }
  });
});
