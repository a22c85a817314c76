/**
 * The person's console in a real browser as its tests use it: Chromium
 * driven by playwright-core, the reference provider (real Redis, real SMTP
 * sink) and the demo relying site (examples/demo-site) on 127.0.0.1, and the
 * steps a person takes there (sign in at the demo site, open /console).
 */
import { readFileSync } from 'node:fs';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type { Locator, Page } from 'playwright-core';

import { createDemoSite, type DemoSite } from '../../examples/demo-site/site.ts';
import { launchChromium, problems, step, type Chromium, type LogMark } from './browser.ts';
import { freePort } from './net.ts';
import { startHarness, type Harness } from './reference.ts';

/** The demo-site client exactly as examples/config.json registers it, moved to `base`. */
const shipped = (JSON.parse(readFileSync(new URL('../../examples/config.json', import.meta.url), 'utf8')) as { clients: ClientMetadata[] })
  .clients.find((c) => c.client_id === 'demo-site')!;
const SHIPPED_BASE = 'http://localhost:3001';

export interface DemoConsole {
  h: Harness;
  site: DemoSite;
  client: ClientMetadata;
  /** The demo site's origin. */
  base: string;
  chromium: Chromium;
  /** The demo site's log lines. */
  siteLog: string[];
  close(): Promise<void>;
}

export async function startDemoConsole(name: string): Promise<DemoConsole> {
  const world: Partial<DemoConsole> = { siteLog: [] };
  const close = async () => {
    // Everything that started is closed, whatever failed before.
    const closers = [() => world.chromium?.close(), () => world.site?.close(), () => world.h?.close()];
    const errors: unknown[] = [];
    for (const closeOne of closers) {
      try {
        await closeOne();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw errors[0];
  };
  try {
    const port = await freePort();
    const base = world.base = `http://127.0.0.1:${port}`;
    const client = world.client = JSON.parse(JSON.stringify(shipped).replaceAll(SHIPPED_BASE, base)) as ClientMetadata;
    expect(client.client_name).to.equal('Demo Site');
    const h = world.h = await startHarness(name, { clients: [client], allowPrivateFetchHosts: ['127.0.0.1'] });
    const site = world.site = createDemoSite({
      issuer: new URL(h.issuer), clientId: 'demo-site', clientSecret: client.client_secret!, baseUrl: base,
      allowInsecure: true, log: (line) => { world.siteLog!.push(line); },
    });
    await site.listen(port, '127.0.0.1');
    world.chromium = await launchChromium();
    return { ...world as DemoConsole, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

/** The steps of the console's browser tests, on what `world()` gives when they run. */
export function demoConsoleSteps(world: () => DemoConsole) {
  function expectNoProblems(from: LogMark) {
    const found = problems(world().chromium.log, from);
    expect(found, `CSP violations or page errors:\n${found.join('\n')}`).to.deep.equal([]);
  }

  const heading1 = (page: Page) => page.getByRole('heading', { level: 1 });

  /**
   * At the demo site: "Sign in", the service's pages (address, the code from
   * the letter, consent), and back on the demo site signed in. Returns the
   * `sub` the site got (its log line).
   */
  async function signInAtDemo(page: Page, email: string): Promise<string> {
    const log = world().chromium.log;
    await step(log, 'open the demo site', () => page.goto(`${world().base}/`));
    expect(await page.locator('body').innerText()).to.include('You are not signed in.');
    await step(log, 'press "Sign in" on the demo site', async () => {
      await page.getByRole('link', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    });
    expect(page.url().startsWith(`${world().h.issuer}/interaction/`), page.url()).to.equal(true);
    const sent = world().h.smtp.letters.length;
    await step(log, 'type the address', async () => {
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    });
    const letter = await world().h.smtp.waitFor((l) => world().h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email) && /\b\d{6}\b/.test(l.subject ?? ''), 30_000);
    const code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
    await step(log, 'type the code', async () => {
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Demo Site wants to access your account' }).waitFor();
    });
    const signedIn = world().siteLog.length;
    await step(log, 'allow on the consent page', async () => {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL(`${world().base}/`);
    });
    expect(await page.locator('body').innerText()).to.include(`Signed in as ${email}.`);
    const line = world().siteLog.slice(signedIn).find((l) => l.startsWith('demo site: signed in sub='));
    const sub = /sub=(\S+)/.exec(line ?? '')?.[1];
    expect(sub, `the demo site's sign-in log line: ${world().siteLog.join('\n')}`).to.be.a('string');
    return sub!;
  }

  /** /console in the same browser: already signed in at the service, so no page asks for anything. */
  async function openConsole(page: Page): Promise<void> {
    const letters = world().h.smtp.letters.length;
    const res = await step(world().chromium.log, 'open /console', async () => {
      const r = await page.goto(`${world().h.issuer}/console`);
      await page.waitForURL(`${world().h.issuer}/console`);
      await page.getByRole('heading', { level: 1, name: 'Your console' }).waitFor();
      return r;
    });
    expect(res?.headers()['content-security-policy']).to.include("default-src 'none'");
    expect(await page.getByLabel('Email address').count(), 'no sign-in page on the way').to.equal(0);
    expect(world().h.smtp.letters.length, 'no code asked again').to.equal(letters);
    // No script on the console at all: everything below is forms and links.
    expect(await page.locator('script').count()).to.equal(0);
  }

  const section = (page: Page, name: string): Locator => page.getByRole('region', { name });
  /** A list item of a section that carries a heading with `name`. */
  const itemNamed = (region: Locator, name: string): Locator =>
    region.getByRole('listitem').filter({ has: region.page().getByRole('heading', { level: 3, name, exact: true }) });

  return { expectNoProblems, heading1, signInAtDemo, openConsole, section, itemNamed };
}
