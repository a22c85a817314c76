/**
 * The person's console (issue 5) in a real browser: Debian's Chromium driven by playwright-core,
 * against the reference provider (real Redis, real SMTP sink) and the demo relying site
 * (examples/demo-site) on 127.0.0.1. A person signed in at the demo site reads and marks messages
 * in /console and mutes the site as a sender. Every page is watched for CSP violations and script
 * errors; screenshots land in test-artifacts/.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type { BrowserContext } from 'playwright-core';

import { mark, saveScreenshot, step, type Chromium } from '../helpers/browser.ts';
import { demoConsoleSteps, startDemoConsole } from '../helpers/demo-console.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import type { Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('the console in a real browser (Chromium)', function () {
  // Every browser action and navigation is bounded by 30 s (BROWSER_TIMEOUT_MS);
  // a test walks a few dozen of them.
  this.timeout(180_000);

  let h: Harness;
  let client: ClientMetadata;
  let base: string;
  let chromium: Chromium;

  const world = setUp(() => startDemoConsole('console-inbox-browser'), (started) => ({ h, client, base, chromium } = started));
  const { expectNoProblems, signInAtDemo, openConsole, section, itemNamed } = demoConsoleSteps(world);

  it('mutes a sender and reads a message in the inbox', async () => {
    const from = mark(chromium.log);
    const log = chromium.log;
    const context: BrowserContext = await chromium.newContext();
    try {
      const page = await context.newPage();
      const email = 'console-inbox@example.com';
      const sub = await signInAtDemo(page, email);

      const notify = async (n: number) => {
        const res = await documentedFetch(`${h.issuer}/api/notify`, {
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
