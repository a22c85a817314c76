/**
 * A real Chromium for end-to-end tests, driven by playwright-core and never
 * downloaded at run time: CHROMIUM_PATH, else Debian's /usr/bin/chromium, else
 * the binary shipped inside the registry package @sparticuz/chromium (a dev
 * dependency, so `npm install && npm test` needs no system browser). Plus a
 * tiny relying site on 127.0.0.1 for the browser to land on.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

import { freePort } from './net.ts';

/** Debian's Chromium (`apt-get install -y chromium`), used when present. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * Which Chromium the tests drive: `CHROMIUM_PATH` if set (it must exist),
 * else Debian's, else the one inside @sparticuz/chromium (unpacked once into
 * the temp directory by the package itself; its Lambda flags are not used).
 */
export async function chromiumExecutable(): Promise<string> {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen) {
    if (!existsSync(chosen)) throw new Error(`CHROMIUM_PATH=${chosen} does not exist`);
    return chosen;
  }
  if (existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

/** Exactly these flags; the user data directory is a fresh mkdtemp directory (launchPersistentContext). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Bound on every browser action and navigation. */
export const BROWSER_TIMEOUT_MS = 30_000;

/** What the pages said: console messages (CSP violations among them) and uncaught errors. */
export interface BrowserLog {
  console: string[];
  pageErrors: string[];
}

export interface Chromium {
  browser: Browser;
  /** The persistent context on the fresh user data directory. */
  context: BrowserContext;
  log: BrowserLog;
  userDataDir: string;
  /** A further context in the same browser, watched like the first. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** Reports every CSP violation a page sees to the console (needs JavaScript in that context). */
const REPORT_CSP_VIOLATIONS = `document.addEventListener('securitypolicyviolation', (e) => {
  console.error('securitypolicyviolation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || '(inline)') + ' on ' + e.documentURI);
}, true);`;

function watchPage(page: Page, log: BrowserLog): void {
  page.on('console', (msg) => { log.console.push(`[${msg.type()}] ${msg.text()} (${msg.location().url || page.url()})`); });
  page.on('pageerror', (err) => { log.pageErrors.push(`${err.message} (${page.url()})`); });
}

async function watch(context: BrowserContext, log: BrowserLog): Promise<void> {
  context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
  await context.addInitScript({ content: REPORT_CSP_VIOLATIONS });
  for (const page of context.pages()) watchPage(page, log);
  context.on('page', (page) => watchPage(page, log));
}

/** A point in the log, to look only at what came after it. */
export interface LogMark { console: number; pageErrors: number }

export function mark(log: BrowserLog): LogMark {
  return { console: log.console.length, pageErrors: log.pageErrors.length };
}

/**
 * CSP violations and page errors in the log (since `from`). Chromium words a
 * violation "Refused to ..." in older builds and "... violates the following
 * Content Security Policy directive ..." in newer ones; the init script adds
 * "securitypolicyviolation: ..." wherever JavaScript runs.
 */
export function problems(log: BrowserLog, from: LogMark = { console: 0, pageErrors: 0 }): string[] {
  const csp = log.console.slice(from.console)
    .filter((line) => /Refused to|securitypolicyviolation|Content Security Policy/i.test(line));
  return [...csp, ...log.pageErrors.slice(from.pageErrors).map((e) => `pageerror: ${e}`)];
}

/** Runs one browser step; if it fails, the error also carries everything the pages logged. */
export async function step<T>(log: BrowserLog, name: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    const lines = [...log.console, ...log.pageErrors.map((e) => `pageerror: ${e}`)];
    throw new Error(`${name}: ${(err as Error).message}\nbrowser log:\n${lines.join('\n') || '(empty)'}`, { cause: err });
  }
}

/** Launches Chromium (see chromiumExecutable) headless on a fresh user data directory. Never skips. */
export async function launchChromium(options: BrowserContextOptions = {}): Promise<Chromium> {
  const executablePath = await chromiumExecutable();
  const userDataDir = await mkdtemp(join(tmpdir(), 'osn-chromium-'));
  const log: BrowserLog = { console: [], pageErrors: [] };
  const extra: BrowserContext[] = [];
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_FLAGS,
      timeout: BROWSER_TIMEOUT_MS,
      locale: 'en-US',
      ...options,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  const browser = context.browser();
  if (!browser) {
    await context.close();
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error('playwright gave no Browser for the persistent context');
  }
  await watch(context, log);
  return {
    browser, context, log, userDataDir,
    async newContext(opts = {}) {
      const ctx = await browser.newContext({ locale: 'en-US', ...opts });
      extra.push(ctx);
      await watch(ctx, log);
      return ctx;
    },
    async close() {
      try {
        for (const ctx of extra) await ctx.close().catch(() => {});
        await context.close();
      } finally {
        await rm(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface SiteServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Every request it got, as method and full URL. */
  requests: { method: string; url: URL }[];
  close(): Promise<void>;
}

/**
 * A relying site on a free port of 127.0.0.1: answers every request 200 with
 * a short plain-text page ("callback reached" on a path ending in /callback,
 * "site signed out" on one ending in /signed-out).
 */
export async function startSiteServer(): Promise<SiteServer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const requests: SiteServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    requests.push({ method: req.method ?? 'GET', url });
    req.resume();
    req.on('end', () => {
      const text = url.pathname.endsWith('/callback') ? 'callback reached'
        : url.pathname.endsWith('/signed-out') ? 'site signed out'
          : 'ok';
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    origin,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Where browser tests leave screenshots: test-artifacts/ at the project root (git-ignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** A full-page PNG of `page` saved as test-artifacts/<name>; returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = join(ARTIFACTS_DIR, name);
  await page.screenshot({ path: file, fullPage: true, timeout: BROWSER_TIMEOUT_MS });
  return file;
}
