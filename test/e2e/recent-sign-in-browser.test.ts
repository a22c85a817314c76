/**
 * A recent sign-in for what adds access, in Chromium (issue 28): "Add a
 * passkey" 10 minutes after signing in goes through the page that says why
 * and a fresh sign-in (here with the passkey the person already has, which
 * the sign-in page offers), back to the Passkeys section, where the person
 * adds it; within 5 minutes nothing asks; removing one never asks. Each
 * passkey added or removed brings one inbox entry and one letter in the
 * person's stored language (German), without List-Unsubscribe, and nothing
 * mutes them. The blocked-site page of a sign-in asks the same way and the
 * sign-in at the site goes on afterwards, without JavaScript.
 * Time: the stored session's sign-in moved back (test/helpers/recent-sign-in.ts).
 */
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';

import { t } from '../../src/i18n/index.ts';
import { checkPage, PHONE } from '../helpers/axe.ts';
import { mark, problems, step, type Chromium } from '../helpers/browser.ts';
import { passkeySteps, startPasskeysWorld, virtualAuthenticator, type Authenticator } from '../helpers/passkeys-browser.ts';
import { typeEmailedCode } from '../helpers/passkeys.ts';
import { signedInAgo } from '../helpers/recent-sign-in.ts';
import { lettersSettled, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('a recent sign-in for what adds access, in Chromium with its virtual authenticator', function () {
  this.timeout(180_000);

  let h: Harness;
  let chromium: Chromium;

  const world = setUp(() => startPasskeysWorld('recent-sign-in-browser'), (started) => ({ h, chromium } = started));
  const { startAtSite, backAtSite, signInByCode, notice } = passkeySteps(world);

  const TEN_MINUTES = 600;
  const SERVICE = 'Sign-in service';

  async function age(context: BrowserContext, seconds: number): Promise<void> {
    const cookie = (await context.cookies(h.issuer)).find((c) => c.name === '_session');
    await signedInAgo(h.reference.provider, cookie!.value, seconds);
  }

  /** Another device: the page's virtual authenticator replaced by a new one, with no passkey yet. */
  async function otherDevice(auth: Authenticator): Promise<Authenticator> {
    await auth.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: auth.id });
    const { authenticatorId } = await auth.cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return {
      cdp: auth.cdp, id: authenticatorId,
      credentials: async () => (await auth.cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
    };
  }

  /** The console's notice once the page came back with `done`. */
  async function noticeOf(page: Page, done: string): Promise<string> {
    await page.waitForURL((u) => u.searchParams.get('done') === done, { timeout: 30_000 });
    return notice(page);
  }

  /** The page before the sign-in: its sentence, axe at 390 px and on the desktop (`axe`), and its button pressed. */
  async function throughPageBefore(page: Page, why: 'reauth.why.add_passkey' | 'reauth.why.unblock_site', locale: 'de' | 'en', axe: boolean): Promise<void> {
    await page.waitForURL((u) => u.pathname === '/console/sign-in-again');
    await page.getByRole('heading', { level: 1, name: t(locale, 'reauth.title') }).waitFor();
    expect(await page.locator('main .lead').innerText()).to.equal(t(locale, why));
    // axe runs in the page's JavaScript: checked where the context has it (the page itself has no script).
    if (axe) {
      const found = await step(chromium.log, 'axe', () => checkPage(page, 'sign in again'));
      expect(found, found.join('\n')).to.deep.equal([]);
    }
    await page.getByRole('link', { name: t(locale, 'reauth.submit') }).click();
  }

  it('"Add a passkey": at once within 5 minutes of signing in; 10 minutes after, a fresh sign-in first, then added; each passkey added and removed told once, in German, with no way to mute it', async () => {
    const from = mark(chromium.log);
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const auth = await virtualAuthenticator(context, page);
      const posted: string[] = [];
      page.on('request', (r) => { if (r.method() === 'POST') posted.push(new URL(r.url()).pathname); });
      await step(chromium.log, 'sign in by code', () => signInByCode(page, 'greta@example.com'));

      // Her language, chosen in the console, is German from now on.
      await page.goto(`${h.issuer}/console`);
      await page.getByRole('combobox', { name: t('en', 'console.language.label') }).selectOption('de');
      await page.getByRole('region', { name: t('en', 'console.language.title') }).getByRole('button', { name: t('en', 'console.save') }).click();
      expect(await noticeOf(page, 'language')).to.equal(t('de', 'console.notice.language'));
      const section = page.getByRole('region', { name: t('de', 'console.passkeys.title') });

      // Within 5 minutes of signing in: added at once.
      await age(context, 240);
      await section.getByLabel(t('de', 'console.passkeys.new_name')).fill('Laptop');
      posted.length = 0;
      await section.getByRole('button', { name: t('de', 'console.passkeys.add') }).click();
      expect(await step(chromium.log, 'added at once', () => noticeOf(page, 'passkey_added'))).to.equal(t('de', 'console.passkeys.notice.added'));
      expect(posted).to.deep.equal(['/console/passkeys/options', '/console/passkeys']);

      // Ten minutes after signing in: the page that says why, then the sign-in page, where her passkey signs her in.
      await age(context, TEN_MINUTES);
      await section.getByLabel(t('de', 'console.passkeys.new_name')).fill('Telefon');
      posted.length = 0;
      await section.getByRole('button', { name: t('de', 'console.passkeys.add') }).click();
      await throughPageBefore(page, 'reauth.why.add_passkey', 'de', true);
      await step(chromium.log, 'fresh sign-in', () => page.waitForURL((u) => u.pathname === '/console', { timeout: 30_000 }));
      expect(new URL(page.url()).hash).to.equal('#passkeys');
      expect(posted.map((p) => p.replace(/^\/interaction\/[\w-]+/, '/interaction'))).to.deep.equal(['/console/passkeys/options', '/interaction/passkey/options', '/interaction/passkey']);
      // Nothing was added on the way: she presses "Add a passkey" again, on her other
      // device this time (an authenticator refuses a second passkey for an account it holds one of).
      expect(await page.getByRole('heading', { level: 3, name: 'Telefon' }).count()).to.equal(0);
      const phone = await otherDevice(auth);
      await section.getByLabel(t('de', 'console.passkeys.new_name')).fill('Telefon');
      await section.getByRole('button', { name: t('de', 'console.passkeys.add') }).click();
      expect(await noticeOf(page, 'passkey_added')).to.equal(t('de', 'console.passkeys.notice.added'));
      expect(await page.getByRole('heading', { level: 3, name: 'Telefon' }).count()).to.equal(1);
      expect(await phone.credentials()).to.have.length(1);

      // Removing one, 10 minutes later again: it never asks.
      await age(context, TEN_MINUTES);
      await section.getByRole('link', { name: t('de', 'console.passkeys.remove', { name: 'Laptop' }) }).click();
      await page.getByRole('button', { name: t('de', 'console.passkeys.remove_submit', { name: 'Laptop' }) }).click();
      expect(await noticeOf(page, 'passkey_removed')).to.equal(t('de', 'console.passkeys.notice.removed'));

      // One inbox entry and one letter for each, in German; no List-Unsubscribe.
      const subjects = {
        added: t('de', 'notice.passkey_added.subject', { serviceName: SERVICE }),
        removed: t('de', 'notice.passkey_removed.subject', { serviceName: SERVICE }),
      };
      const toGreta = () => h.smtp.letters.filter((l) => JSON.stringify(l.to).includes('greta@example.com') && Object.values(subjects).includes(l.subject ?? ''));
      await h.smtp.waitFor(() => toGreta().length >= 3, 30_000);
      expect(await lettersSettled(h)).to.equal(0);
      const letters = toGreta();
      expect(letters.map((l) => [l.subject, /„(\w+)“|“(\w+)”|"(\w+)"/.exec(l.text ?? '')?.slice(1).find(Boolean)]).sort()).to.deep.equal([
        [subjects.added, 'Laptop'], [subjects.added, 'Telefon'], [subjects.removed, 'Laptop'],
      ].sort());
      for (const letter of letters) {
        expect(letter.headers.get('content-language')).to.equal('de');
        expect(letter.headers.has('list-unsubscribe'), 'no List-Unsubscribe').to.equal(false);
        expect(letter.headers.has('list-unsubscribe-post')).to.equal(false);
      }
      const inbox = await (await page.request.get(`${h.issuer}/console/api/inbox`)).json() as { items: { notice?: string; from?: string; category: string; title: string }[] };
      const told = inbox.items.filter((i) => i.notice === 'passkey_added' || i.notice === 'passkey_removed');
      expect(told.map((i) => [i.notice, i.from, i.category, i.title]).sort()).to.deep.equal([
        ['passkey_added', 'service', 'security', t('de', 'notice.passkey_added.title')],
        ['passkey_added', 'service', 'security', t('de', 'notice.passkey_added.title')],
        ['passkey_removed', 'service', 'security', t('de', 'notice.passkey_removed.title')],
      ]);

      // Nothing mutes them: the senders are the sites she signed in to, and the service is none of them.
      await page.goto(`${h.issuer}/console`);
      const senders = page.getByRole('region', { name: t('de', 'console.senders.title') });
      expect(await senders.getByRole('checkbox').count()).to.equal(1);
      expect(await senders.getByRole('checkbox', { name: t('de', 'console.senders.mute', { siteName: 'Passkey Shop' }) }).count()).to.equal(1);
      expect(await senders.innerText()).to.not.include(SERVICE);
      const api = await (await page.request.get(`${h.issuer}/console/api/senders`)).json() as { clientId: string }[];
      expect(api.map((s) => s.clientId)).to.deep.equal(['pk-site']);
      expect(await page.getByRole('region', { name: t('de', 'console.inbox.title') }).innerText()).to.include(t('de', 'notice.passkey_removed.title'));
    } finally {
      await context.close();
    }
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
  });

  it('without JavaScript, "Unblock and continue" on the blocked-site page 10 minutes after signing in asks for a fresh sign-in, then unblocks on the second press and the site\'s sign-in goes on', async () => {
    const from = mark(chromium.log);
    const context = await chromium.newContext({ viewport: PHONE, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const first = await signInByCode(page, 'bo@example.com');
      await page.goto(`${h.issuer}/console/sites/pk-site/block`);
      await page.getByRole('button', { name: t('en', 'console.block.submit', { siteName: 'Passkey Shop' }) }).click();
      expect(await noticeOf(page, 'blocked')).to.equal(t('en', 'console.notice.blocked'));
      await age(context, TEN_MINUTES);

      const flow = await startAtSite(page);
      await page.getByRole('button', { name: t('en', 'blocked.unblock') }).click();
      await throughPageBefore(page, 'reauth.why.unblock_site', 'en', false);
      await step(chromium.log, 'fresh sign-in', () => typeEmailedCode(page, h, 'bo@example.com'));
      // Back on the blocked-site page of the same sign-in: still blocked until she presses Unblock again.
      await page.waitForURL((u) => u.pathname.startsWith('/console/blocked-site/'));
      const accountId = String(first.sub);
      expect((await h.reference.plugin.connectedSites(accountId)).find((s) => s.clientId === 'pk-site')?.status).to.equal('blocked');
      await page.getByRole('button', { name: t('en', 'blocked.unblock') }).click();
      const claims = await step(chromium.log, 'back at the site', () => backAtSite(page, flow));
      expect(claims.sub).to.equal(first.sub);
      expect((await h.reference.plugin.connectedSites(accountId)).find((s) => s.clientId === 'pk-site')?.status).to.equal('connected');
    } finally {
      await context.close();
    }
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
  });
});
