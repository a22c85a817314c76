/**
 * What people are told (issue 34, items 4 and 7; docs/security.md "Security
 * notices"): the "could not be reached" notice says one thing (what happened,
 * what to do), in every language, inbox and letter alike; new-browser
 * notices for one person coalesce (three a day, then one summary that counts
 * the rest), in every language; the browser cookie's signature is checked
 * (a forged or unsigned `osn.known` is a new browser); "sessions ended" is
 * held back per browser, not per kind of browser.
 */
import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { LOCALES, t } from '../../src/i18n/index.ts';
import type { Agent } from '../helpers/agent.ts';
import { startReceiver, type BackchannelReceiver } from '../helpers/backchannel.ts';
import { browser, FIREFOX, inboxOf, lettersTo as lettersOf, SAFARI } from '../helpers/notices.ts';
import { discover, lettersSettled, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const SERVICE = 'Sign-in service';
const many = { limit: 1000, windowMs: 60_000 };

for (const embedded of [false, true]) describe(`what people are told: one thing when a site was not reached, new browsers coalesced, the browser cookie signed, sessions ended per browser${embedded ? ' (embedded store)' : ''}`, () => {
  let h: Harness;
  let down: BackchannelReceiver;
  let config: oidc.Configuration;
  let downConfig: oidc.Configuration;
  const site = siteClient('words-site', { client_name: 'Words Site' });
  const downSite = () => siteClient('words-down', { client_name: 'Down Site', backchannel_logout_uri: down.url });

  const lines: { message: string; fields?: Record<string, unknown> }[] = [];
  before(async () => {
    down = await startReceiver({ statuses: () => 503 });
    const log = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields });
    h = await startHarness('notice-words', {
      embedded,
      logger: { info: log, warn: log, error: log },
      clients: [site, downSite()],
      allowPrivateFetchHosts: ['127.0.0.1'],
      // Many sign-ins from new browsers, one network: past the reference provider's code limits.
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many, perAddress: many },
      // One try: the logout is given up at once, and the person told.
      plugin: { backchannelLogout: { attempts: 1, backoffMs: 100, giveUpAfterMs: 60_000 } },
    });
    config = await discover(h, site);
    downConfig = await discover(h, downSite());
  });
  after(async () => {
    await h?.close();
    await down?.close();
  });

  const inbox = (agent: Agent) => inboxOf(h, agent);
  const lettersTo = (email: string, subject: string) => lettersOf(h, email, subject);
  const settled = async () => expect(await lettersSettled(h)).to.equal(0);
  const accountOf = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;

  it('"could not be reached" says what happened and what to do, nothing else (no "if this was you, nothing to do"), in every language, inbox and letter alike', async () => {
    for (const locale of LOCALES) {
      const email = `unreachable-${locale}@example.com`;
      const agent = browser(FIREFOX, locale);
      await signIn(h, downConfig, agent, email);
      expect(await h.reference.plugin.removeAccess(await accountOf(email), 'words-down')).to.equal('removed');
      const subject = t(locale, 'notice.site_unreachable.subject', { serviceName: SERVICE, name: 'Down Site' });
      const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
      const todo = t(locale, 'notice.site_unreachable.todo', { name: 'Down Site' });
      expect(letter.text, locale).to.include(todo);
      expect(letter.text, locale).to.include(t(locale, 'notice.site_unreachable.title', { name: 'Down Site' }));
      for (const other of ['notice.if_you', 'notice.not_you'] as const) expect(letter.text, `${locale} ${other}`).to.not.include(t(locale, other));
      const [item] = (await inbox(agent)).filter((i) => i.notice === 'site_unreachable');
      expect(item!.title).to.equal(t(locale, 'notice.site_unreachable.title', { name: 'Down Site' }));
      expect(item!.body.split('\n').at(-1)).to.equal(todo);
      expect(item!.body).to.not.include(t(locale, 'notice.if_you'));
    }
  });

  it('new browsers of one person coalesce: three told one by one within a day, the fourth starts one summary (entry and letter), later ones only count in it, in every language', async () => {
    for (const locale of LOCALES) {
      const email = `many-browsers-${locale}@example.com`;
      const first = browser(FIREFOX, locale);
      await signIn(h, config, first, email);
      const from = lines.length;
      for (let i = 0; i < 6; i += 1) await signIn(h, config, browser(i % 2 ? SAFARI : FIREFOX, locale), email);
      await settled();
      // The fifth and sixth only count in the summary, each said so in the log.
      const coalesced = { message: 'security notice counted in the day\'s summary', fields: { kind: 'new_browser' } };
      expect(lines.slice(from).filter((l) => l.message.startsWith('security notice ') && l.message !== 'security notice given'), locale).to.deep.equal([coalesced, coalesced]);
      const one = t(locale, 'notice.new_browser.subject', { serviceName: SERVICE });
      const summary = t(locale, 'notice.new_browsers.subject', { serviceName: SERVICE });
      expect([lettersTo(email, one).length, lettersTo(email, summary).length], locale).to.deep.equal([3, 1]);
      const [summaryLetter] = lettersTo(email, summary);
      expect(summaryLetter!.text).to.include(t(locale, 'notice.new_browsers.title'));
      expect(summaryLetter!.text).to.include(t(locale, 'notice.not_you'));

      const told = (await inbox(first)).filter((i) => i.notice === 'new_browser');
      expect(told, locale).to.have.length(4);
      // Newest first: the summary, updated by the fifth and sixth, unread again, counting three.
      expect(told[0]!.title).to.equal(t(locale, 'notice.new_browsers.title'));
      expect(told[0]!.read).to.equal(false);
      const counted = t(locale, 'notice.new_browsers.count', { count: 3, date: '\u0000', browser: '\u0000', until: '\u0000' }).split('\u0000');
      for (const piece of counted.filter((p) => p.trim().length > 3)) expect(told[0]!.body, locale).to.include(piece);
      expect(told.slice(1).map((i) => i.title)).to.deep.equal(Array(3).fill(t(locale, 'notice.new_browser.title')));
    }
  });

  it('a browser cookie whose signature does not check out (unsigned, or forged) is a new browser: a fresh id, signed, and the notice', async () => {
    const email = 'forged-browser@example.com';
    const laptop = browser(FIREFOX);
    await signIn(h, config, laptop, email);
    const jar = laptop.cookies.get(new URL(h.issuer).host)!;
    const known = jar.get('osn.known')!;
    expect(known).to.match(/^[\w-]{22}$/);
    // Kept 400 days (the most a browser keeps a cookie), HttpOnly, for the whole site; HTTP dates drop the milliseconds.
    const before = Date.now();
    const answer = await fetch(`${h.issuer}/auth`, { redirect: 'manual' });
    const after = Date.now();
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith('osn.known='))!;
    expect(cookie).to.match(/^osn\.known=[\w-]{22}; path=\/; expires=[^;]+; samesite=lax; httponly$/);
    const keep = 400 * 24 * 60 * 60_000;
    expect(Date.parse(/expires=([^;]+)/.exec(cookie)![1]!)).to.be.within(Math.floor((before + keep) / 1000) * 1000, after + keep);
    expect(jar.get('osn.known.sig')).to.match(/^[\w-]+$/);

    const subject = t('en', 'notice.new_browser.subject', { serviceName: SERVICE });
    const copies = [{ 'osn.known': known }, { 'osn.known': known, 'osn.known.sig': 'forged-signature-0123456789a' }];
    for (const [i, cookies] of copies.entries()) {
      const thief = browser(SAFARI);
      thief.cookies.set(new URL(h.issuer).host, new Map(Object.entries(cookies)));
      await signIn(h, config, thief, email);
      const fresh = thief.cookies.get(new URL(h.issuer).host)!;
      expect(fresh.get('osn.known')).to.match(/^[\w-]{22}$/).and.not.equal(known);
      expect(fresh.get('osn.known.sig')).to.match(/^[\w-]+$/);
      await h.smtp.waitFor(() => lettersTo(email, subject).length === i + 1);
    }
    // The real browser, with its signed cookie, is still the one the account knows.
    await signIn(h, config, laptop, email);
    await settled();
    expect(lettersTo(email, subject)).to.have.length(2);
  });

  it('"sessions ended" is held back per browser: another browser of the same kind is told; the same browser again within the day is not', async () => {
    const email = 'ended-twice@example.com';
    const laptop = browser(FIREFOX);
    const other = browser(FIREFOX);
    await signIn(h, config, laptop, email);
    await signIn(h, config, other, email);
    const endOthers = async (agent: Agent) => {
      const res = await agent.request('POST', `${h.issuer}/console/api/sessions/end-others`, undefined, { accept: 'application/json', origin: h.issuer });
      expect(res.status).to.equal(200);
    };
    const subject = t('en', 'notice.sessions_ended.subject', { serviceName: SERVICE });
    await endOthers(laptop);
    await h.smtp.waitFor(() => lettersTo(email, subject).length === 1);
    // A second person (the same kind of browser: Firefox on Windows) signs in again and signs the others out.
    await signIn(h, config, other, email);
    await endOthers(other);
    await h.smtp.waitFor(() => lettersTo(email, subject).length === 2);
    // The same browser once more, the same day: held back.
    await signIn(h, config, laptop, email);
    await endOthers(other);
    await settled();
    expect(lettersTo(email, subject)).to.have.length(2);
    expect((await inbox(other)).filter((i) => i.notice === 'sessions_ended')).to.have.length(2);
  });
});
