/**
 * Security notices (docs/security.md "Security notices"; issue 28): a sign-in
 * from a browser the account never used, "sign out of the others", and a
 * host's own notice through plugin.securityNotice: one inbox entry from the
 * service (category security) and one letter in the person's language,
 * without List-Unsubscribe, with the way out; at most one per kind, person
 * and day where a repeat says nothing new; the details under the text rules.
 */
import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import type { Agent } from '../helpers/agent.ts';
import { browser, FIREFOX, inboxOf, lettersTo as lettersOf, SAFARI } from '../helpers/notices.ts';
import { discover, lettersSettled, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
const SERVICE = 'Sign-in service';

describe('security notices: a new browser, the other sessions ended, a host\'s own', () => {
  let h: Harness;
  let config: oidc.Configuration;
  const site = siteClient('notices-site', { client_name: 'Notices Site' });

  const lines: { message: string; fields?: Record<string, unknown> }[] = [];
  before(async () => {
    const log = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields });
    h = await startHarness('notices', { clients: [site], logger: { info: log, warn: log, error: log } });
    config = await discover(h, site);
  });
  after(async () => h.close());

  const inbox = (agent: Agent) => inboxOf(h, agent);
  const lettersTo = (email: string, subject: string) => lettersOf(h, email, subject);
  /** Every letter queued so far has reached the mail server (or been given up), so one that should not come would have. */
  const settled = async () => expect(await lettersSettled(h)).to.equal(0);

  it('a sign-in from a browser the account never used: one notice (inbox and letter, no List-Unsubscribe, the way out); the same browser again, or the first one: none', async () => {
    const email = 'new-browser@example.com';
    const laptop = browser(FIREFOX, 'de');
    await signIn(h, config, laptop, email);
    // The very first browser of an account tells nothing.
    expect((await inbox(laptop)).filter((i) => i.notice)).to.deep.equal([]);

    const phone = browser(SAFARI, 'de');
    await signIn(h, config, phone, email);
    const subject = t('de', 'notice.new_browser.subject', { serviceName: SERVICE });
    const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    expect(letter.headers.get('content-language')).to.equal('de');
    expect(letter.headers.has('list-unsubscribe')).to.equal(false);
    // The reference provider's own wording: its people sign in with emailed codes.
    expect(letter.text).to.include(`${t('de', 'notice.not_you')} ${t('de', 'login.check_email')}`);
    expect(letter.text).to.include(`${h.issuer}/console/sessions`);
    expect(letter.text).to.include('Safari');
    const items = await inbox(laptop);
    expect(items.map((i) => ({ notice: i.notice, from: i.from, category: i.category }))).to.deep.equal([{ notice: 'new_browser', from: 'service', category: 'security' }]);

    // The phone again, and the laptop again: both known now.
    await signIn(h, config, phone, email);
    await signIn(h, config, laptop, email);
    await settled();
    expect(lettersTo(email, subject)).to.have.length(1);
    expect((await inbox(laptop)).filter((i) => i.notice === 'new_browser')).to.have.length(1);
  });

  it('"sign out of the others": the notice names the browser it came from; the others are signed out', async () => {
    const email = 'ended-others@example.com';
    const laptop = browser(FIREFOX);
    const phone = browser(SAFARI);
    await signIn(h, config, laptop, email);
    await signIn(h, config, phone, email);
    const res = await laptop.request('POST', `${h.issuer}/console/api/sessions/end-others`, undefined, { accept: 'application/json', origin: h.issuer });
    expect(res.status).to.equal(200);
    const subject = t('en', 'notice.sessions_ended.subject', { serviceName: SERVICE });
    const letter = await h.smtp.waitFor((l) => l.subject === subject && JSON.stringify(l.to).includes(email));
    expect(letter.headers.has('list-unsubscribe')).to.equal(false);
    expect(letter.text).to.include('Firefox');
    expect((await inbox(laptop)).map((i) => i.notice)).to.include('sessions_ended');
    expect((await phone.get(`${h.issuer}/console`)).status).to.equal(303);
  });

  it('plugin.securityNotice from the host: given, then held back for the same thing within the day; a different one is given; details follow the text rules', async () => {
    const email = 'host-notice@example.com';
    const laptop = browser(FIREFOX);
    await signIn(h, config, laptop, email);
    const sub = (await h.reference.accounts.findByEmail(email))!.accountId;
    const { plugin } = h.reference;
    expect(await plugin.securityNotice(sub, 'passkey_added', { name: 'Verify at evil.com', ref: 'cred-1' })).to.equal('given');
    const from = lines.length;
    expect(await plugin.securityNotice(sub, 'passkey_added', { name: 'Verify at evil.com', ref: 'cred-1' })).to.equal('held_back');
    // Only the notices' own lines: a letter's or a session's line may come in between.
    expect(lines.slice(from).filter((l) => l.message.startsWith('security notice'))).to.deep.equal([{ message: 'security notice held back: the same was told within the window', fields: { kind: 'passkey_added' } }]);
    // A kind the service has no words for is the host's bug.
    const unknown = await plugin.securityNotice(sub, 'passkey_renamed' as 'passkey_added', {}).then(() => 'told', (err: Error) => `${err.name}: ${err.message}`);
    expect(unknown).to.equal('TypeError: oidc-signout-notify: securityNotice: unknown kind "passkey_renamed"; one of new_browser, passkey_added, passkey_removed, account_linked, account_unlinked, sessions_ended, site_unreachable, upstream_sessions_ended, upstream_account_disabled, upstream_credential_change');
    expect(await plugin.securityNotice(sub, 'passkey_added', { name: 'Work key', ref: 'cred-2' })).to.equal('given');

    const subject = t('en', 'notice.passkey_added.subject', { serviceName: SERVICE });
    await h.smtp.waitFor(() => lettersTo(email, subject).length === 2);
    await settled();
    const letters = lettersTo(email, subject);
    expect(letters).to.have.length(2);
    const first = letters.find((l) => l.text!.includes('evil'))!;
    // A domain in a detail is never a link: the text rules put word joiners around its dots (SPEC "Rules for the text of messages").
    expect(first.text).to.not.include('evil.com');
    expect(first.text).to.include('evil\u2060.\u2060com');
    expect(first.html || '').to.not.match(/href="[^"]*evil/);
    expect((await inbox(laptop)).filter((i) => i.notice === 'passkey_added')).to.have.length(2);
  });
});
