/**
 * Passkeys in Chromium: without JavaScript the login page offers the emailed code and no
 * passkey button (the passkey sign-in needs the script).
 */
import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { PHONE } from '../helpers/axe.ts';
import type { Chromium } from '../helpers/browser.ts';
import { passkeySteps, startPasskeysWorld } from '../helpers/passkeys-browser.ts';
import { setUp } from '../helpers/set-up.ts';

describe('passkeys in Chromium with its virtual authenticator', function () {
  this.timeout(180_000);

  let chromium: Chromium;

  const world = setUp(() => startPasskeysWorld('passkeys-without-js-browser'), (started) => ({ chromium } = started));
  const { startAtSite } = passkeySteps(world);

  it('without JavaScript the login page offers the code and no passkey button', async () => {
    const context = await chromium.newContext({ viewport: PHONE, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await startAtSite(page);
      await page.getByLabel('Email address').waitFor();
      expect(await page.getByRole('button', { name: t('en', 'login.passkey') }).count()).to.equal(0);
      expect(await page.getByRole('button', { name: 'Send me a code' }).isVisible()).to.equal(true);
    } finally {
      await context.close();
    }
  });
});
