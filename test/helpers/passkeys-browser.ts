/**
 * Passkeys in Chromium as their tests use them: the reference provider on
 * http://localhost (a secure context with a domain as RP ID; browsers refuse
 * 127.0.0.1 as one), a relying site that signs in with openid-client, a log
 * that keeps every line, Chromium's virtual authenticator (DevTools
 * protocol), and the steps of a sign-in there.
 */
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';

import { PHONE } from './axe.ts';
import { launchChromium, startSiteServer, type Chromium, type SiteServer } from './browser.ts';
import { typeEmailedCode, withoutAutofill } from './passkeys.ts';
import { discover, siteClient, startHarness, type Harness } from './reference.ts';

export { virtualAuthenticator, type Authenticator } from './passkeys.ts';

export interface PasskeysWorld {
  site: SiteServer;
  client: ClientMetadata;
  h: Harness;
  /** The site's openid-client configuration. */
  config: oidc.Configuration;
  chromium: Chromium;
  /** Every line the service logged. */
  logged: string[];
  close(): Promise<void>;
}

/** Everything the passkey tests need; what started is closed again if a later part fails to start. */
export async function startPasskeysWorld(name: string): Promise<PasskeysWorld> {
  const world: Partial<PasskeysWorld> = { logged: [] };
  const record = (m: string, f?: Record<string, unknown>) => { world.logged!.push(`${m} ${JSON.stringify(f ?? {})}`); };
  const close = async () => {
    for (const closeOne of [() => world.chromium?.close(), () => world.h?.close(), () => world.site?.close()]) await closeOne()?.catch(() => {});
  };
  try {
    const site = world.site = await startSiteServer();
    // It also polls Shared Signals (client credentials with ssf.manage), to hear of passkeys added and removed.
    const client = world.client = siteClient('pk-site', {
      client_name: 'Passkey Shop', redirect_uris: [`${site.origin}/pk-site/callback`],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email offline_access ssf.manage',
    });
    const h = world.h = await startHarness(name, { clients: [client], host: 'localhost', logger: { info: record, warn: record, error: record } });
    world.config = await discover(h, client);
    world.chromium = await launchChromium({ viewport: PHONE });
    return { ...world as PasskeysWorld, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The steps of the passkey tests, on what `world()` gives when they run. */
export function passkeySteps(world: () => PasskeysWorld) {
  /** The site sends the browser to sign in (code flow with PKCE through openid-client). */
  async function startAtSite(page: Page) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(world().config, {
      redirect_uri: world().client.redirect_uris![0]!, scope: 'openid email', state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    await page.goto(url.href);
    return { verifier, state };
  }

  /** Consent if asked, then the site's callback redeemed by the site: its ID token's claims. */
  async function backAtSite(page: Page, flow: { verifier: string; state: string }): Promise<Record<string, unknown>> {
    await page.waitForURL((u) => u.href.startsWith(world().site.origin) || u.pathname.startsWith('/interaction/'));
    if (!page.url().startsWith(world().site.origin)) {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL((u) => u.href.startsWith(world().site.origin));
    }
    const tokens = await oidc.authorizationCodeGrant(world().config, new URL(page.url()), { pkceCodeVerifier: flow.verifier, expectedState: flow.state });
    return tokens.claims() as Record<string, unknown>;
  }

  async function signInByCode(page: Page, email: string): Promise<Record<string, unknown>> {
    const flow = await startAtSite(page);
    await typeEmailedCode(page, world().h, email);
    return backAtSite(page, flow);
  }

  async function signOutOfService(page: Page): Promise<void> {
    await page.goto(`${world().h.issuer}/session/end`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
  }

  /** A passkey the service keeps (of `accountId`, or of anyone). */
  async function storedPasskey(accountId = '*'): Promise<{ accountId: string; id: string }> {
    for await (const key of world().h.reference.plugin.store.scan(`account:{${accountId}}:passkeys`)) {
      const ids = Object.keys(await world().h.reference.plugin.store.hgetall(key));
      if (ids.length > 0) return { accountId: /account:\{([^}]+)\}/.exec(key)![1]!, id: ids[0]! };
    }
    throw new Error('no passkey stored');
  }

  async function notice(page: Page): Promise<string> {
    const box = page.locator('#notice');
    await box.waitFor();
    return box.innerText();
  }

  return { startAtSite, backAtSite, signInByCode, withoutAutofill, signOutOfService, storedPasskey, notice };
}
