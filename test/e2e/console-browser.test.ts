/**
 * The person's console (issue 5) in a real browser: Debian's Chromium driven
 * by playwright-core, against the reference provider (real Redis, real SMTP
 * sink) and the demo relying site (examples/demo-site) on 127.0.0.1. A person
 * signs in at the demo site with the emailed code, then uses /console as they
 * would: blocks the site and meets the blocked page on the next sign-in there;
 * reads and marks messages and mutes the site as a sender. Every page is
 * watched for CSP violations and script errors; screenshots land in
 * test-artifacts/.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type { BrowserContext, Locator, Page } from 'playwright-core';

import { createDemoSite, type BackchannelLogoutEvent, type DemoSite } from '../../examples/demo-site/site.ts';
import { launchChromium, mark, problems, saveScreenshot, step, type Chromium } from '../helpers/browser.ts';
import { freePort } from '../helpers/net.ts';
import { startHarness, type Harness } from '../helpers/reference.ts';

/** The demo-site client exactly as examples/config.json registers it, moved to `base`. */
const shipped = (JSON.parse(readFileSync(new URL('../../examples/config.json', import.meta.url), 'utf8')) as { clients: ClientMetadata[] })
  .clients.find((c) => c.client_id === 'demo-site')!;
const SHIPPED_BASE = 'http://localhost:3001';

describe('the console in a real browser (Chromium)', function () {
  // Every browser action and navigation is bounded by 30 s (BROWSER_TIMEOUT_MS);
  // a test walks a few dozen of them.
  this.timeout(180_000);

  let h: Harness;
  let site: DemoSite;
  let client: ClientMetadata;
  let base: string;
  let chromium: Chromium;
  const siteLog: string[] = [];

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    client = JSON.parse(JSON.stringify(shipped).replaceAll(SHIPPED_BASE, base)) as ClientMetadata;
    expect(client.client_name).to.equal('Demo Site');
    h = await startHarness('console-browser', { clients: [client], allowPrivateFetchHosts: ['127.0.0.1'] });
    site = createDemoSite({
      issuer: new URL(h.issuer), clientId: 'demo-site', clientSecret: client.client_secret!, baseUrl: base,
      allowInsecure: true, log: (line) => { siteLog.push(line); },
    });
    await site.listen(port, '127.0.0.1');
    chromium = await launchChromium();
  });

  after(async () => {
    // Everything that started is closed, whatever failed before.
    const closers = [() => chromium?.close(), () => site?.close(), () => h?.close()];
    const errors: unknown[] = [];
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw errors[0];
  });

  function expectNoProblems(from: ReturnType<typeof mark>) {
    const found = problems(chromium.log, from);
    expect(found, `CSP violations or page errors:\n${found.join('\n')}`).to.deep.equal([]);
  }

  const heading1 = (page: Page) => page.getByRole('heading', { level: 1 });

  /**
   * At the demo site: "Sign in", the service's pages (address, the code from
   * the letter, consent), and back on the demo site signed in. Returns the
   * `sub` the site got (its log line).
   */
  async function signInAtDemo(page: Page, email: string): Promise<string> {
    const log = chromium.log;
    await step(log, 'open the demo site', () => page.goto(`${base}/`));
    expect(await page.locator('body').innerText()).to.include('You are not signed in.');
    await step(log, 'press "Sign in" on the demo site', async () => {
      await page.getByRole('link', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    });
    expect(page.url().startsWith(`${h.issuer}/interaction/`), page.url()).to.equal(true);
    const sent = h.smtp.letters.length;
    await step(log, 'type the address', async () => {
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    });
    const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email) && /\b\d{6}\b/.test(l.subject ?? ''), 30_000);
    const code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
    await step(log, 'type the code', async () => {
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Demo Site wants to access your account' }).waitFor();
    });
    const signedIn = siteLog.length;
    await step(log, 'allow on the consent page', async () => {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL(`${base}/`);
    });
    expect(await page.locator('body').innerText()).to.include(`Signed in as ${email}.`);
    const line = siteLog.slice(signedIn).find((l) => l.startsWith('demo site: signed in sub='));
    const sub = /sub=(\S+)/.exec(line ?? '')?.[1];
    expect(sub, `the demo site's sign-in log line: ${siteLog.join('\n')}`).to.be.a('string');
    return sub!;
  }

  /** /console in the same browser: already signed in at the service, so no page asks for anything. */
  async function openConsole(page: Page): Promise<void> {
    const letters = h.smtp.letters.length;
    const res = await step(chromium.log, 'open /console', async () => {
      const r = await page.goto(`${h.issuer}/console`);
      await page.waitForURL(`${h.issuer}/console`);
      await page.getByRole('heading', { level: 1, name: 'Your console' }).waitFor();
      return r;
    });
    expect(res?.headers()['content-security-policy']).to.include("default-src 'none'");
    expect(await page.getByLabel('Email address').count(), 'no sign-in page on the way').to.equal(0);
    expect(h.smtp.letters.length, 'no code asked again').to.equal(letters);
    // No script on the console at all: everything below is forms and links.
    expect(await page.locator('script').count()).to.equal(0);
  }

  const section = (page: Page, name: string): Locator => page.getByRole('region', { name });
  /** A list item of a section that carries a heading with `name`. */
  const itemNamed = (region: Locator, name: string): Locator =>
    region.getByRole('listitem').filter({ has: region.page().getByRole('heading', { level: 3, name, exact: true }) });

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

  it('mutes a sender and reads a message in the inbox', async () => {
    const from = mark(chromium.log);
    const log = chromium.log;
    const context: BrowserContext = await chromium.newContext();
    try {
      const page = await context.newPage();
      const email = 'console-inbox@example.com';
      const sub = await signInAtDemo(page, email);

      const notify = async (n: number) => {
        const res = await fetch(`${h.issuer}/api/notify`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`demo-site:${encodeURIComponent(client.client_secret!)}`).toString('base64')}`,
          },
          body: JSON.stringify({
            sub,
            category: 'product',
            title: `Order ${n} <shipped>`,
            body: `Track it at https://evil.example/track?n=${n}\nand read the <b>bold</b> print.`,
            url: `https://127.0.0.1:${new URL(base).port}/orders/${n}`,
          }),
        });
        return { status: res.status, json: await res.json() as unknown };
      };
      expect(await notify(1)).to.deep.equal({ status: 202, json: { inApp: true, email: false, skipped: null } });
      expect(await notify(2)).to.deep.equal({ status: 202, json: { inApp: true, email: false, skipped: null } });

      await openConsole(page);
      const inbox = section(page, 'Messages (2 unread)');
      expect(await inbox.count(), 'the inbox says 2 unread').to.equal(1);
      const messages = inbox.getByRole('article');
      expect(await messages.count()).to.equal(2);
      // Newest first; the site's words exactly as written, as text.
      for (const [i, n] of [[0, 2], [1, 1]] as const) {
        const message = messages.nth(i);
        expect(await message.getByRole('heading', { level: 3 }).innerText()).to.equal(`Order ${n} <shipped>`);
        expect(await message.locator('.message-body').innerText()).to.equal(`Track it at https://evil.example/track?n=${n}\nand read the <b>bold</b> print.`);
        expect(await message.locator('b').count(), '<b> shown literally, not as markup').to.equal(0);
        expect(await message.innerText()).to.include('Demo Site').and.include('Product news').and.include('Unread');
        // The url is the message's only link; nothing in the body became one.
        const links = message.getByRole('link');
        expect(await links.count()).to.equal(1);
        expect(await links.first().getAttribute('href')).to.equal(`https://127.0.0.1:${new URL(base).port}/orders/${n}`);
        expect(await message.getByRole('link', { name: 'Open on Demo Site (opens in a new tab)', exact: true }).count()).to.equal(1);
        expect(await message.locator('a[href*="evil"]').count()).to.equal(0);
      }
      await saveScreenshot(page, 'console-inbox.png');

      await step(log, 'press "Mark as read" on the newest', async () => {
        await messages.first().getByRole('button', { name: 'Mark as read' }).click();
        await page.waitForURL((u) => new URL(u).searchParams.get('done') === 'read');
      });
      expect(await page.getByRole('status').innerText()).to.equal('The message is marked as read.');
      const after = section(page, 'Messages (1 unread)');
      expect(await after.count(), 'the inbox says 1 unread').to.equal(1);
      expect(await after.getByRole('button', { name: 'Mark as read' }).count()).to.equal(1);
      expect(await after.getByRole('article').first().innerText()).to.not.include('Unread');

      // Senders: mute Demo Site and save.
      const sender = itemNamed(section(page, 'Senders'), 'Demo Site');
      expect(await sender.count(), 'Demo Site in Senders').to.equal(1);
      const mute = sender.getByLabel('Mute Demo Site: no messages at all');
      expect(await mute.isChecked()).to.equal(false);
      expect(await sender.getByRole('group', { name: 'Product news' }).getByLabel('In your account only').isChecked()).to.equal(true);
      await step(log, 'tick "Mute Demo Site" and Save', async () => {
        await mute.check();
        await sender.getByRole('button', { name: 'Save', exact: true }).click();
        await page.waitForURL((u) => new URL(u).searchParams.get('done') === 'saved');
      });
      expect(await page.getByRole('status').innerText()).to.equal('Your settings are saved.');
      const saved = itemNamed(section(page, 'Senders'), 'Demo Site');
      expect(await saved.getByLabel('Mute Demo Site: no messages at all').isChecked()).to.equal(true);
      expect(await saved.innerText()).to.include('Muted');

      expect(await notify(3)).to.deep.equal({ status: 202, json: { inApp: false, email: false, skipped: 'muted' } });
      await step(log, 'reload the console', () => page.reload());
      expect(await section(page, 'Messages (1 unread)').getByRole('article').count(), 'nothing new arrived').to.equal(2);
    } finally {
      await context.close();
    }
    expectNoProblems(from);
  });
});
