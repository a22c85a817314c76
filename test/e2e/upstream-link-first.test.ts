/**
 * Linking that asks first (issue 28; docs/security.md "Linking an upstream
 * account"): an upstream sign-in with the verified address of an existing
 * account makes no session and no link until that account's emailed code is
 * entered, then links, signs in to it and tells the owner (an inbox entry
 * and a letter); an upstream that owns the domain (`trustedEmailDomains`)
 * links at once and tells; addresses compared by addressKey, so
 * `\u212Aate@example.test` is `kate@example.test`'s account and
 * `v@bücher.test` is `v@xn--bcher-kva.test`'s; the console's link and
 * unlink are told.
 */
import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { ACR } from '../../examples/reference/strength.ts';
import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { text } from '../helpers/html.ts';
import { signIn, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { SERVICE, wrongCode } from '../helpers/sign-in-flow.ts';
import type { TestUpstream } from '../helpers/upstream.ts';
import { claimsOf, isCallback, startUpstreamSignIn, UPSTREAM, upstreamSteps } from '../helpers/upstream-sign-in.ts';

const TRUSTED = 'trusted.test';

describe('linking that asks first: an upstream\'s verified address of an existing account (openid-client, a second oidc-provider)', function () {
  this.timeout(60_000);

  let h: Harness;
  let upstream: TestUpstream;
  let config: oidc.Configuration;

  const world = setUp(() => startUpstreamSignIn('upstream-link-first', { trustedEmailDomains: [` ${TRUSTED.toUpperCase()}. `] }), (started) => ({ h, upstream, config } = started));
  const { loginPage, toUpstream, upstreamLogin, signInThroughUpstream, openConsole, post, linksOf } = upstreamSteps(world);

  const accountOf = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;
  const uidOf = (res: Response) => /\/interaction\/([\w-]+)/.exec(res.url)![1]!;
  const h1 = (res: Response) => /<h1>([^<]*)<\/h1>/.exec(res.body)?.[1];
  const subjectOf = (kind: 'account_linked' | 'account_unlinked') => t('en', `notice.${kind}.subject`, { serviceName: SERVICE });

  /** The notices of a kind in the account's inbox: [notice, category, the name it shows] (the words are the service's, written when shown). */
  async function noticesOf(accountId: string, kind: string) {
    const inbox = await h.reference.plugin.inbox.page(accountId);
    return inbox!.items.filter((i) => i.notice === kind).map((i) => [i.notice, i.category, i.details?.name]);
  }
  /** The one letter of the kind to the address, once the worker sent it; no List-Unsubscribe on it. */
  async function letterOf(email: string, kind: 'account_linked' | 'account_unlinked'): Promise<ParsedMail> {
    const mine = () => h.smtp.letters.filter((l) => JSON.stringify(l.to).includes(email) && l.subject === subjectOf(kind));
    await h.smtp.waitFor(() => mine().length >= 1, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(mine()).to.have.length(1);
    expect(mine()[0]!.headers.has('list-unsubscribe')).to.equal(false);
    return mine()[0]!;
  }
  /** Not signed in: the console sends the browser to sign in first. */
  async function expectNoSession(agent: Agent) {
    const res = await agent.get(`${h.issuer}/console`);
    expect(res.status).to.equal(303);
    expect(res.location!.startsWith(`${h.issuer}/auth?`), res.location).to.equal(true);
  }
  /** Through the upstream as `sub`: the page the service answers with. */
  async function throughUpstream(agent: Agent, sub: string) {
    const { page, verifier, state } = await loginPage(agent);
    const { form } = await toUpstream(agent, page);
    return { res: await upstreamLogin(agent, form, sub), verifier, state };
  }

  it('makes no session and no link until the account\'s emailed code is entered (a wrong one refused as ever); then links, signs in to that account and tells its owner', async () => {
    const cleo = await signIn(h, config, new Agent(), 'cleo@example.test');
    const cleoId = String(claimsOf(cleo.tokens).sub);
    upstream.people.set('cleo-up', { email: 'Cleo@Example.test', email_verified: true, name: 'Cleo Up' });

    const agent = new Agent();
    const { res: asked, verifier, state } = await throughUpstream(agent, 'cleo-up');
    expect(asked.status).to.equal(200);
    expect(h1(asked)).to.equal(t('en', 'link_first.title'));
    expect(text(/<p id="link-intro">(.*?)<\/p>/s.exec(asked.body)![1]!)).to.equal(t('en', 'link_first.intro', { name: UPSTREAM.name, email: 'cleo@example.test' }));
    expect(asked.body).to.include('<strong>cleo@example.test</strong>');
    expect(await linksOf(cleoId)).to.deep.equal([]);
    await expectNoSession(agent);
    // Kept under the interaction only, no longer than the interaction lives.
    const uid = uidOf(asked);
    const ttl = await h.redis!.pttl(`${h.prefix}upstream-pending:{${uid}}`);
    expect(ttl).to.be.greaterThan(0).and.at.most(3_600_000);
    // The interaction's page shows the question again.
    expect(h1(await agent.get(`${h.issuer}/interaction/${uid}`))).to.equal(t('en', 'link_first.title'));

    // "Email me a code": to the account's own address.
    const sent = h.smtp.letters.length;
    const codePage = await agent.follow(await agent.submit(asked, formFor(asked.body, '/link/code')));
    expect(codePage.body).to.include('name="code"').and.include('<strong>cleo@example.test</strong>');
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to).includes('cleo@example.test') && /\b\d{6}\b/.test(l.subject ?? ''));
    const code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;

    const wrong = await agent.submit(codePage, formFor(codePage.body, '/code'), { code: wrongCode(code) });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.include(t('en', 'code.error.invalid', { count: 4 }));
    expect(await linksOf(cleoId)).to.deep.equal([]);
    await expectNoSession(agent);

    const right = await agent.follow(await agent.submit(wrong, formFor(wrong.body, '/code'), { code }), isCallback);
    const done = await throughSignInPages(h, agent, right, isCallback, 'unused@example.com');
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.res.location!), { pkceCodeVerifier: verifier, expectedState: state });
    expect(claimsOf(tokens)).to.deep.include({ sub: cleoId, acr: ACR.emailCode, amr: ['otp', 'fed'] });
    expect((await linksOf(cleoId)).map((l) => [l.sub, l.verifiedEmail])).to.deep.equal([['cleo-up', 'Cleo@Example.test']]);
    expect(await h.redis!.exists(`${h.prefix}upstream-pending:{${uid}}`)).to.equal(0);

    // Told: one inbox entry from the service and one letter, in English.
    expect(await noticesOf(cleoId, 'account_linked')).to.deep.equal([['account_linked', 'security', UPSTREAM.name]]);
    expect((await letterOf('cleo@example.test', 'account_linked')).text).to.include(UPSTREAM.name);

    // From now on the upstream account signs in at once, and tells nothing new.
    const again = await signInThroughUpstream(new Agent(), 'cleo-up');
    expect(claimsOf(again.tokens).sub).to.equal(cleoId);
    expect(await noticesOf(cleoId, 'account_linked')).to.have.length(1);
  });

  it('"Email me a code" keeps the code sign-in\'s limits: the sixth code within 15 minutes is refused on the same page (429, Retry-After), nothing linked', async () => {
    await signIn(h, config, new Agent(), 'ivo@example.test');
    upstream.people.set('ivo-up', { email: 'ivo@example.test', email_verified: true });
    const agent = new Agent();
    const { res: asked } = await throughUpstream(agent, 'ivo-up');
    const uid = uidOf(asked);
    // Browsers new to the address share 5 codes per 15 minutes: the sign-in above asked for one of them.
    for (let i = 0; i < 4; i += 1) {
      const sent = await agent.submit(asked, formFor(asked.body, '/link/code'));
      expect(sent.status, `code ${i + 1}`).to.equal(303);
      expect(sent.location).to.equal(`${h.issuer}/interaction/${uid}`);
    }
    const refused = await agent.submit(asked, formFor(asked.body, '/link/code'));
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 900);
    expect(h1(refused)).to.equal(t('en', 'link_first.title'));
    expect(text(/<p id="link-error"[^>]*>(.*?)<\/p>/s.exec(refused.body)![1]!)).to.match(/^Too many codes were sent to this address\. Try again in \d+ minutes?\.$/);
    expect(await linksOf(await accountOf('ivo@example.test'))).to.deep.equal([]);
    await expectNoSession(agent);
  });

  it('Cancel drops the question: the sign-in page again, nothing kept, nothing linked', async () => {
    await signIn(h, config, new Agent(), 'dan@example.test');
    upstream.people.set('dan-up', { email: 'dan@example.test', email_verified: true });
    const agent = new Agent();
    const { res: asked } = await throughUpstream(agent, 'dan-up');
    const uid = uidOf(asked);
    const back = await agent.follow(await agent.submit(asked, formFor(asked.body, '/link/cancel')));
    expect(h1(back)).to.equal(t('en', 'login.title'));
    expect(await h.redis!.exists(`${h.prefix}upstream-pending:{${uid}}`)).to.equal(0);
    expect(await linksOf(await accountOf('dan@example.test'))).to.deep.equal([]);
    await expectNoSession(agent);
  });

  it('a code for another address signs in to that account and drops the question: nothing linked to either', async () => {
    await signIn(h, config, new Agent(), 'gil@example.test');
    upstream.people.set('gil-up', { email: 'gil@example.test', email_verified: true });
    const agent = new Agent();
    const { res: asked } = await throughUpstream(agent, 'gil-up');
    const uid = uidOf(asked);
    // "Use a different email address" is the sign-in page's own form, here by its address.
    const sent = h.smtp.letters.length;
    const other = await agent.request('POST', `${h.issuer}/interaction/${uid}/email`, { ...formFor(asked.body, '/link/cancel').fields, email: 'hal@example.test' }, { origin: h.issuer });
    expect(other.status).to.equal(303);
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to).includes('hal@example.test'));
    const codePage = await agent.follow(other);
    const entered = await agent.submit(codePage, formFor(codePage.body, '/code'), { code: /\b(\d{6})\b/.exec(letter.subject ?? '')![1]! });
    const done = await throughSignInPages(h, agent, entered, isCallback, 'unused@example.com');
    expect(done.res.location).to.satisfy(isCallback);
    expect(await linksOf(await accountOf('gil@example.test'))).to.deep.equal([]);
    expect(await linksOf(await accountOf('hal@example.test'))).to.deep.equal([]);
    expect(await h.redis!.exists(`${h.prefix}upstream-pending:{${uid}}`)).to.equal(0);
  });

  it('an upstream that owns the domain (trustedEmailDomains) links at once and tells; a lookalike domain or a subdomain asks first', async () => {
    const tia = await signIn(h, config, new Agent(), `tia@${TRUSTED}`);
    const tiaId = String(claimsOf(tia.tokens).sub);
    upstream.people.set('tia-up', { email: `tia@${TRUSTED.toUpperCase()}`, email_verified: true });
    const { tokens } = await signInThroughUpstream(new Agent(), 'tia-up');
    expect(claimsOf(tokens)).to.deep.include({ sub: tiaId, acr: ACR.federated, amr: ['fed'] });
    expect((await linksOf(tiaId)).map((l) => l.sub)).to.deep.equal(['tia-up']);
    expect(await noticesOf(tiaId, 'account_linked')).to.have.length(1);
    await letterOf(`tia@${TRUSTED}`, 'account_linked');

    for (const email of [`eve@evil-${TRUSTED}`, `ann@sub.${TRUSTED}`, `bo@${TRUSTED}.evil.test`]) {
      await signIn(h, config, new Agent(), email);
      const sub = `${email}-up`;
      upstream.people.set(sub, { email, email_verified: true });
      const agent = new Agent();
      const { res } = await throughUpstream(agent, sub);
      expect(h1(res), email).to.equal(t('en', 'link_first.title'));
      expect(await linksOf(await accountOf(email)), email).to.deep.equal([]);
      await expectNoSession(agent);
    }
  });

  it('a new verified address makes a new account, linked, with nothing to tell; an unverified one never finds an account', async () => {
    upstream.people.set('new-up', { email: 'newbie@example.test', email_verified: true, name: 'newbie@example.test' });
    const { tokens } = await signInThroughUpstream(new Agent(), 'new-up');
    const id = String(claimsOf(tokens).sub);
    expect(id).to.equal(await accountOf('newbie@example.test'));
    // A name that looks like an address is not kept as the account's name.
    expect(await h.reference.accounts.get(id)).to.not.have.property('name');
    expect(await noticesOf(id, 'account_linked')).to.deep.equal([]);

    const ola = await signIn(h, config, new Agent(), 'ola@example.test');
    upstream.people.set('ola-up', { email: 'ola@example.test', email_verified: false, name: 'Not Ola' });
    const stranger = await signInThroughUpstream(new Agent(), 'ola-up');
    expect(claimsOf(stranger.tokens).sub).to.not.equal(claimsOf(ola.tokens).sub);
    expect(await linksOf(String(claimsOf(ola.tokens).sub))).to.deep.equal([]);
  });

  it('\\u212Aate@example.test (KELVIN SIGN) or \\uFF4Bate@example.test (FULLWIDTH) makes no second account beside kate@example.test: refused by code sign-in, the same account by an upstream', async () => {
    const kate = await signIn(h, config, new Agent(), 'kate@example.test');
    const kateId = String(claimsOf(kate.tokens).sub);
    for (const email of ['\u212Aate@example.test', '\uFF4Bate@example.test']) {
      const agent = new Agent();
      const { page } = await loginPage(agent);
      const refused = await agent.submit(page, formFor(page.body, '/email'), { email });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.include(t('en', 'login.error.invalid_email'));
      expect((await h.reference.accounts.findByEmail(email))!.accountId).to.equal(kateId);

      const sub = `kate-${email.codePointAt(0)}`;
      upstream.people.set(sub, { email, email_verified: true });
      const { res } = await throughUpstream(agent, sub);
      expect(h1(res)).to.equal(t('en', 'link_first.title'));
      // The code would go to Kate's own address, never to the lookalike.
      expect(res.body).to.include('<strong>kate@example.test</strong>');
      expect(await linksOf(kateId)).to.deep.equal([]);
      expect(await h.redis!.exists(`${h.prefix}account-email:{${email}}`)).to.equal(0);
    }
  });

  it('v@bücher.test from an upstream finds the v@xn--bcher-kva.test account, boss@corp.test. the boss@corp.test one: asked first, never a second account', async () => {
    for (const [registered, vouched] of [['v@xn--bcher-kva.test', 'v@bücher.test'], ['boss@corp.test', 'Boss@Corp.test.']] as const) {
      const owner = await signIn(h, config, new Agent(), registered);
      const ownerId = String(claimsOf(owner.tokens).sub);
      const sub = `idna-${registered}`;
      upstream.people.set(sub, { email: vouched, email_verified: true });
      const { res } = await throughUpstream(new Agent(), sub);
      expect(h1(res), vouched).to.equal(t('en', 'link_first.title'));
      // The code would go to the account's own address.
      expect(res.body).to.include(`<strong>${registered}</strong>`);
      expect(await linksOf(ownerId)).to.deep.equal([]);
      expect((await h.reference.accounts.findByEmail(vouched))!.accountId).to.equal(ownerId);
      expect(await h.redis!.exists(`${h.prefix}account-email:{${vouched.toLowerCase()}}`)).to.equal(0);
    }
  });

  it('the console\'s "Link an account" tells the owner (account_linked), and Unlink tells too (account_unlinked)', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'lou@example.test');
    const lou = await accountOf('lou@example.test');
    upstream.people.set('lou-up', { name: 'Lou Up' });
    const page = await openConsole(agent);
    const linked = await upstreamLogin(agent, await agent.follow(await post(agent, page, `/console/linked-accounts/${UPSTREAM.id}/link`)), 'lou-up');
    expect(linked.url).to.equal(`${h.issuer}/console?done=upstream_linked#notice`);
    expect(await noticesOf(lou, 'account_linked')).to.have.length(1);
    await letterOf('lou@example.test', 'account_linked');

    const unlinked = await post(agent, linked, `/console/linked-accounts/${UPSTREAM.id}/unlink`);
    expect(unlinked.location).to.equal(`${h.issuer}/console?done=upstream_unlinked#notice`);
    expect(await noticesOf(lou, 'account_unlinked')).to.deep.equal([['account_unlinked', 'security', UPSTREAM.name]]);
    expect((await letterOf('lou@example.test', 'account_unlinked')).text).to.include(UPSTREAM.name);
  });
});
