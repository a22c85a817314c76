/**
 * The person's console (issue 5) in a real browser: Debian's Chromium driven by playwright-core,
 * against the reference provider (real Redis, real SMTP sink) and the demo relying site
 * (examples/demo-site) on 127.0.0.1. A person signs in at the demo site with the emailed code, blocks
 * the site in /console, and meets the blocked page on the next sign-in there. Every page is watched
 * for CSP violations and script errors; screenshots land in test-artifacts/.
 */
import { once } from 'node:events';

import { expect } from 'chai';

import type { BackchannelLogoutEvent, DemoSite } from '../../examples/demo-site/site.ts';
import { mark, saveScreenshot, step, type Chromium } from '../helpers/browser.ts';
import { demoConsoleSteps, startDemoConsole } from '../helpers/demo-console.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('the console in a real browser (Chromium)', function () {
  // Every browser action and navigation is bounded by 30 s (BROWSER_TIMEOUT_MS);
  // a test walks a few dozen of them.
  this.timeout(180_000);

  let h: Harness;
  let site: DemoSite;
  let base: string;
  let chromium: Chromium;

  const world = setUp(() => startDemoConsole('console-block-browser'), (started) => ({ h, site, base, chromium } = started));
  const { expectNoProblems, heading1, signInAtDemo, openConsole, section, itemNamed } = demoConsoleSteps(world);

  it('signs in with the emailed code, opens /console, sees the demo site, blocks it, and sees the blocked page on the next sign-in there', async () => {
    const from = mark(chromium.log);
    const log = chromium.log;
    const page = chromium.context.pages()[0] ?? await chromium.context.newPage();
    const email = 'console-block@example.com';
    await signInAtDemo(page, email);
    const accountId = (await h.reference.accounts.findByEmail(email))!.accountId;

    await openConsole(page);
    const sites = section(page, 'Connected sites');
    const tile = itemNamed(sites, 'Demo Site');
    expect(await tile.count(), 'Demo Site in Connected sites').to.equal(1);
    expect(await tile.innerText()).to.include('Connected');
    // The English text is "Block {siteName}…", one label inside the flex button.
    const blockLink = tile.getByRole('link', { name: 'Block Demo Site…', exact: true });
    expect(await blockLink.count()).to.equal(1);
    expect(await blockLink.getAttribute('href')).to.equal('/console/sites/demo-site/block');

    await step(log, 'click "Block Demo Site…"', async () => {
      await blockLink.click();
      await page.getByRole('heading', { level: 1, name: 'Block Demo Site?' }).waitFor();
    });
    // The confirmation says what happens.
    const confirmation = await page.locator('main').innerText();
    for (const sentence of [
      'This is what happens when you block Demo Site:',
      'Demo Site loses its access to your account at once and is signed out.',
      'Demo Site can no longer sign you in or get tokens for your account.',
      'Demo Site cannot send you messages.',
      'If Demo Site sends you here to sign in, you will be asked whether to unblock it.',
      'You can unblock Demo Site in your console at any time.',
    ]) expect(confirmation).to.include(sentence);
    expect((await h.reference.plugin.sites.get(accountId, 'demo-site'))!.status, 'nothing happens before the button').to.equal('connected');

    // The demo site hears of it through the back channel.
    const backchannel = once(site.events, 'backchannel-logout') as Promise<[BackchannelLogoutEvent]>;
    await step(log, 'press "Block Demo Site"', async () => {
      await page.getByRole('button', { name: 'Block Demo Site', exact: true }).click();
      await page.waitForURL(`${h.issuer}/console?done=blocked#notice`);
    });
    await step(log, 'the notice', () => page.getByRole('status').filter({ hasText: 'The site is blocked.' }).waitFor());
    expect(await page.getByRole('status').innerText()).to.equal('The site is blocked. It lost its access to your account and can no longer sign you in.');
    const blockedTile = itemNamed(section(page, 'Connected sites'), 'Demo Site');
    const tileText = await blockedTile.innerText();
    expect(tileText).to.include('Blocked').and.match(/Blocked on \w+ \d+, \d{4}/);
    expect(await blockedTile.getByRole('button', { name: 'Unblock Demo Site', exact: true }).count()).to.equal(1);
    expect(await blockedTile.getByRole('link', { name: /^Block / }).count()).to.equal(0);
    // A blocked site is shown as blocked, not as a sender.
    expect(await itemNamed(section(page, 'Senders'), 'Demo Site').count()).to.equal(0);
    const record = (await h.reference.plugin.sites.get(accountId, 'demo-site'))!;
    expect(record.status).to.equal('blocked');
    await saveScreenshot(page, 'console-block.png');

    const [event] = await step(log, 'back-channel logout at the demo site', () => Promise.race([
      backchannel,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no back-channel logout within 30 s')), 30_000).unref()),
    ]));
    expect(event.dropped, 'the demo site dropped its session').to.equal(1);

    // Back at the demo site: the back channel already signed the person out
    // there (so there is no "Sign out of this site" to press); "Sign in" again.
    await step(log, 'back to the demo site', () => page.goto(`${base}/`));
    expect(await page.getByRole('button', { name: 'Sign out of this site' }).count()).to.equal(0);
    expect(await page.locator('body').innerText()).to.include('You are not signed in.');
    const letters = h.smtp.letters.length;
    await step(log, 'press "Sign in" at the blocked site', async () => {
      await page.getByRole('link', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((u) => u.href.startsWith(`${h.issuer}/console/blocked-site/`));
      await heading1(page).waitFor();
    });
    const date = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' }).format(record.blockedAt!);
    expect(await heading1(page).innerText()).to.equal(`You blocked Demo Site on ${date}`);
    const blockedPage = await page.locator('main').innerText();
    expect(blockedPage).to.include('While it is blocked, Demo Site cannot sign you in');
    expect(await page.getByRole('button', { name: 'Unblock and continue', exact: true }).count()).to.equal(1);
    expect(h.smtp.letters.length, 'the service session lives: no code asked').to.equal(letters);
    await saveScreenshot(page, 'blocked-site.png');

    await step(log, 'press "Cancel"', async () => {
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await page.waitForURL((u) => u.href.startsWith(`${base}/callback?`));
    });
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).to.equal('access_denied');
    expect(back.searchParams.has('code')).to.equal(false);
    expect(await page.title()).to.equal('Sign-in failed');
    expect(await page.locator('body').innerText()).to.include('The sign-in did not complete (access_denied).');
    expect((await h.reference.plugin.sites.get(accountId, 'demo-site'))!.status, 'Cancel leaves it blocked').to.equal('blocked');
    expect(site.sessionCount()).to.equal(0);
    expectNoProblems(from);
  });
});
