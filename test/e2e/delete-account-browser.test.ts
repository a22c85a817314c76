/**
 * Delete my account in Chromium: the console's "Your account" section, the
 * question in every language, deleting, and the page that says it is done,
 * each axe-clean (axe-core) at 390 px and on a desktop, with no sideways
 * scroll; the account is gone afterwards.
 */
import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { checkPage, PHONE } from '../helpers/axe.ts';
import { mark, problems, step, type Chromium } from '../helpers/browser.ts';
import { passkeySteps, startPasskeysWorld } from '../helpers/passkeys-browser.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('Delete my account, in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(180_000);

  let h: Harness;
  let chromium: Chromium;
  const world = setUp(() => startPasskeysWorld('delete-account-browser'), (started) => ({ h, chromium } = started));
  const { signInByCode } = passkeySteps(world);

  it('the section, the question in every language, deleting and the done page', async () => {
    const from = mark(chromium.log);
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const email = 'dora@example.com';
      await step(chromium.log, 'sign in by code', () => signInByCode(page, email));
      const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;
      await page.goto(`${h.issuer}/console`);
      const section = page.getByRole('region', { name: t('en', 'console.account.title') });
      expect(await section.getByRole('link', { name: t('en', 'console.account.export') }).getAttribute('href')).to.equal('/console/api/export');
      await section.getByRole('link', { name: t('en', 'console.account.delete') }).click();
      await page.getByRole('heading', { level: 1, name: t('en', 'console.delete.title') }).waitFor();
      const found: string[] = [];
      for (const locale of ['de', 'fr', 'ar', 'en'] as const) {
        await h.reference.plugin.preferences.setLocale(accountId, locale);
        await page.goto(`${h.issuer}/console/delete-account`);
        await page.getByRole('heading', { level: 1, name: t(locale, 'console.delete.title') }).waitFor();
        found.push(...await step(chromium.log, `axe ${locale}`, () => checkPage(page, `delete account (${locale})`)));
      }
      await page.getByRole('button', { name: t('en', 'console.delete.submit') }).click();
      await page.getByRole('heading', { level: 1, name: t('en', 'console.delete.done_title') }).waitFor();
      found.push(...await checkPage(page, 'account deleted (en)'));
      for (const locale of ['de', 'fr', 'ar'] as const) {
        await page.goto(`${h.issuer}/console/account-deleted?lang=${locale}`);
        await page.getByRole('heading', { level: 1, name: t(locale, 'console.delete.done_title') }).waitFor();
        found.push(...await checkPage(page, `account deleted (${locale})`));
      }
      expect(found, found.join('\n')).to.deep.equal([]);
      expect(await h.reference.accounts.findByEmail(email)).to.equal(undefined);
      expect(await h.reference.plugin.connectedSites(accountId)).to.deep.equal([]);
      expect(problems(chromium.log, from)).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
