/**
 * Linking that asks first, proved by a passkey (issue 28; docs/security.md
 * "Linking an upstream account, names and addresses"), in Chromium at 390 px
 * with its virtual authenticator: an account with an address and a passkey;
 * an upstream sign-in with that verified address lands on "This address
 * already has an account here" (axe-clean, no sideways scroll), signs in
 * nobody and links nothing; "Use a passkey of this account" proves it, the
 * sign-in finishes into the account, the upstream account is linked and the
 * owner told.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';

import { t } from '../../src/i18n/index.ts';
import { PHONE } from '../helpers/axe.ts';
import { mark, problems, step, type Chromium, type SiteServer } from '../helpers/browser.ts';
import { pageWalkSteps, startPageWalk, UPSTREAM } from '../helpers/page-walk.ts';
import { virtualAuthenticator, withoutAutofill } from '../helpers/passkeys.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import type { TestUpstream } from '../helpers/upstream.ts';

describe('linking that asks first, proved by a passkey (Chromium, virtual authenticator)', function () {
  this.timeout(120_000);

  let h: Harness;
  let site: SiteServer;
  let client: ClientMetadata;
  let chromium: Chromium;
  let upstream: TestUpstream;
  let found: string[];

  const world = setUp(() => startPageWalk('upstream-link-first-browser'), (started) => ({ h, site, client, chromium, upstream, found } = started));
  const { check, authorizationUrl, signIn } = pageWalkSteps(world);

  it('an upstream sign-in with the address of an account that has a passkey: nothing until the passkey proves it, then linked, signed in and told', async () => {
    const email = 'pat@walk.example';
    const from = mark(chromium.log);
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const auth = await virtualAuthenticator(context, page);
      await withoutAutofill(page);
      await step(chromium.log, 'sign in by code', () => signIn(page, email, authorizationUrl(client)));
      const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;

      await page.goto(`${h.issuer}/console`);
      const section = page.getByRole('region', { name: t('en', 'console.passkeys.title') });
      await section.getByLabel(t('en', 'console.passkeys.new_name')).fill('Laptop');
      await section.getByRole('button', { name: t('en', 'console.passkeys.add') }).click();
      await step(chromium.log, 'passkey added', () => page.getByRole('status').waitFor());
      expect(await auth.credentials()).to.have.length(1);

      // The upstream vouches for Pat's address: a sign-in through it (prompt=login) asks first.
      upstream.people.set('pat-at-social', { email: 'PAT@walk.example', email_verified: true, name: 'Pat Elsewhere' });
      await page.goto(authorizationUrl(client, { prompt: 'login' }));
      await page.getByRole('button', { name: t('en', 'login.upstream', { name: UPSTREAM }) }).click();
      await page.getByLabel('Who').fill('pat-at-social');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await step(chromium.log, 'asked first', () => page.getByRole('heading', { level: 1, name: t('en', 'link_first.title') }).waitFor());
      expect(await page.locator('#link-intro').innerText()).to.equal(t('en', 'link_first.intro', { name: UPSTREAM, email }));
      await page.getByRole('button', { name: t('en', 'link_first.passkey') }).waitFor();
      await check(page, 'link first');
      expect(await h.redis!.hgetall(`${h.prefix}account:{${accountId}}:upstreams`)).to.deep.equal({});

      await page.getByRole('button', { name: t('en', 'link_first.passkey') }).click();
      await step(chromium.log, 'back at the site', () => page.waitForURL((u) => u.href.startsWith(site.origin), { timeout: 30_000 }));
      const links = await h.redis!.hgetall(`${h.prefix}account:{${accountId}}:upstreams`);
      expect(Object.keys(links)).to.deep.equal(['social']);
      expect(JSON.parse(links.social!)).to.deep.include({ sub: 'pat-at-social', verifiedEmail: 'PAT@walk.example' });
      const inbox = await h.reference.plugin.inbox.page(accountId);
      expect(inbox!.items.filter((i) => i.notice === 'account_linked').map((i) => i.details?.name)).to.deep.equal([UPSTREAM]);
    } finally {
      await context.close();
    }
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
    expect(found).to.deep.equal([]);
  });
});
