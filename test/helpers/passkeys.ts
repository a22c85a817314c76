/**
 * Passkeys in Chromium without a person: the DevTools protocol's virtual
 * authenticator (WebAuthn.enable, WebAuthn.addVirtualAuthenticator with
 * resident keys and user verification), and the sign-in page's script told
 * the browser has no autofill for passkeys.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type * as oidc from 'openid-client';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';

import type { ReferenceSettings } from '../../examples/reference/provider.ts';
import { PHONE } from './axe.ts';
import { launchChromium, mark, problems, startSiteServer, type Chromium, type SiteServer } from './browser.ts';
import { discover, siteClient, startHarness, type Harness } from './reference.ts';

export interface Authenticator {
  cdp: CDPSession;
  id: string;
  credentials(): Promise<{ credentialId: string; signCount: number; isResidentCredential: boolean; userHandle?: string }[]>;
}

/** A platform authenticator with resident keys and user verification, answering without a person (presence simulated). */
export async function virtualAuthenticator(context: BrowserContext, page: Page): Promise<Authenticator> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return {
    cdp, id: authenticatorId,
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
  };
}

/**
 * The virtual authenticator answers a conditional (autofill) request at
 * once, as if the person picked the passkey the address field offered. To
 * press "Sign in with a passkey" instead, the page gets a browser without
 * autofill for passkeys: the script as served, told the browser has none.
 */
export async function withoutAutofill(page: Page): Promise<void> {
  await page.route(/\/assets\/passkeys-[\w-]+\.js$/, async (route) => {
    const served = await route.fetch();
    const body = await served.text();
    const asked = 'lib.browserSupportsWebAuthnAutofill()';
    expect(body).to.include(asked);
    await route.fulfill({ response: served, body: body.replaceAll(asked, 'Promise.resolve(false)') });
  });
}

/** What a passkey test stands on: a relying site for the browser to land on, the reference provider on http://localhost (passkeys need a domain), Chromium. */
export interface PasskeyBench {
  site: SiteServer;
  client: ClientMetadata;
  h: Harness;
  /** openid-client's configuration for `client`, from discovery. */
  config: oidc.Configuration;
  chromium: Chromium;
  /** `work` on a phone-sized page of a fresh context with a virtual authenticator; then no CSP violation or page error may have been logged. */
  inPage(work: (page: Page, auth: Authenticator) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** Starts the bench for one site (`clientId`, named `clientName`, its callback on the site server); `settings` go to the reference provider. */
export async function startPasskeyBench(name: string, clientId: string, clientName: string, settings: Partial<ReferenceSettings> = {}): Promise<PasskeyBench> {
  const started: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of started.reverse()) await stop().catch(() => {});
  };
  try {
    const site = await startSiteServer();
    started.push(() => site.close());
    const client = siteClient(clientId, { client_name: clientName, redirect_uris: [`${site.origin}/${clientId}/callback`] });
    const h = await startHarness(name, { ...settings, clients: [client], host: 'localhost' });
    started.push(() => h.close());
    const config = await discover(h, client);
    const chromium = await launchChromium({ viewport: PHONE });
    started.push(() => chromium.close());
    async function inPage(work: (page: Page, auth: Authenticator) => Promise<void>): Promise<void> {
      const from = mark(chromium.log);
      const context = await chromium.newContext({ viewport: PHONE });
      try {
        const page = await context.newPage();
        await work(page, await virtualAuthenticator(context, page));
      } finally {
        await context.close();
      }
      expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
    }
    return { site, client, h, config, chromium, inPage, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** On the sign-in page: the address typed, the code read from the letter and typed, "Sign in" pressed. */
export async function typeEmailedCode(page: Page, h: Harness, email: string): Promise<void> {
  const sent = h.smtp.letters.length;
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Send me a code' }).click();
  const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email));
  await page.getByLabel('6-digit code').fill(/\b(\d{6})\b/.exec(letter.subject ?? '')![1]!);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
