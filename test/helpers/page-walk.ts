/**
 * The walk through every page a person can reach, in Chromium at 390 px and
 * on a desktop: the reference provider on http://localhost (passkeys need a
 * domain) with a shop, an organization's intranet and an upstream, and the
 * steps the walk takes (sign-in through the pages, axe-core's check of a
 * page, a notice in view, words kept whole).
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { checkPage, PHONE } from './axe.ts';
import { launchChromium, startSiteServer, step, type Chromium, type SiteServer } from './browser.ts';
import { freePort } from './net.ts';
import { siteClient, startHarness, type Harness } from './reference.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';

export const SITE_NAME = 'Northwind Shop Outfitters';
export const ADMIN = 'admin@walk.example';
export const MEMBER = 'a.member.with.a.rather.long.address.for.testing@subdomain.walk-example.example';
export const UPSTREAM = 'Social Example';

export interface PageWalk {
  site: SiteServer;
  h: Harness;
  client: ClientMetadata;
  intranet: ClientMetadata;
  chromium: Chromium;
  upstream: TestUpstream;
  /** What axe-core and the overflow check found on the pages checked so far. */
  found: string[];
  close(): Promise<void>;
}

/** Everything the walk needs; what started is closed again if a later part fails to start. */
export async function startPageWalk(name: string): Promise<PageWalk> {
  const walk: Partial<PageWalk> = { found: [] };
  const close = async () => {
    const closers = [() => walk.chromium?.close(), () => walk.h?.close(), () => walk.site?.close(), () => walk.upstream?.close()];
    for (const closeOne of closers) await closeOne()?.catch(() => {});
  };
  try {
    const site = walk.site = await startSiteServer();
    const client = walk.client = siteClient('walk', {
      client_name: SITE_NAME,
      client_uri: 'https://northwind-shop-outfitters-international.example',
      redirect_uris: [`${site.origin}/walk/callback`],
      post_logout_redirect_uris: [`${site.origin}/walk/signed-out`],
    });
    const intranet = walk.intranet = siteClient('walk-intranet', { client_name: 'Acme Intranet', redirect_uris: [`${site.origin}/walk-intranet/callback`] });
    const many = { limit: 10_000, windowMs: 60_000 };
    // http://localhost: passkeys need a domain as RP ID; the upstream lives on 127.0.0.1.
    const port = await freePort();
    const upstream = walk.upstream = await startTestUpstream({ redirectUri: `http://localhost:${port}/upstream/social/callback` });
    upstream.people.set('admin-at-social', { email: 'someone.else@social.example', email_verified: true, name: 'Admin Elsewhere' });
    walk.h = await startHarness(name, {
      port, host: 'localhost',
      upstreams: [{ id: 'social', name: UPSTREAM, issuer: upstream.issuer, ...upstream.client }],
      clients: [client, intranet],
      organizations: [{ id: 'acme', name: 'Acme Corporation International Holdings', admins: [ADMIN], members: [MEMBER, 'second.member@walk.example'], clients: ['walk-intranet'] }],
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
    });
    walk.chromium = await launchChromium({ viewport: PHONE });
    return { ...walk as PageWalk, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The walk's steps, on what `walk()` gives when the tests run. */
export function pageWalkSteps(walk: () => PageWalk) {
  async function check(page: Page, label: string): Promise<void> {
    walk().found.push(...await step(walk().chromium.log, `check ${label}`, () => checkPage(page, label)));
  }

  function authorizationUrl(c: ClientMetadata, params: Record<string, string> = {}): string {
    const url = new URL('/auth', walk().h.issuer);
    url.search = new URLSearchParams({
      client_id: c.client_id, response_type: 'code', redirect_uri: c.redirect_uris![0]!, scope: 'openid email',
      state: oidc.randomState(), code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...params,
    }).toString();
    return url.href;
  }

  async function codeFromLetter(email: string, sent: number): Promise<string> {
    const letter = await walk().h.smtp.waitFor((l) => walk().h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to ?? '').includes(email), 30_000);
    return /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
  }

  /** Address and code; returns the page after the code (consent or the site). */
  async function signIn(page: Page, email: string, url: string): Promise<void> {
    await page.goto(url);
    // Signed in at the service already: no address asked.
    if (await page.getByLabel('Email address').count()) {
      const sent = walk().h.smtp.letters.length;
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send me a code' }).click();
      const code = await codeFromLetter(email, sent);
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState();
    }
    if (await page.getByRole('button', { name: 'Allow', exact: true }).count()) {
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
    }
    await page.waitForURL((u) => u.href.startsWith(walk().site.origin));
  }

  /** The notice after a console action: announced as a status, and within the viewport at 390 px. */
  async function expectNoticeInView(page: Page, text: string): Promise<void> {
    const notice = page.getByRole('status');
    await notice.waitFor();
    expect(await notice.innerText()).to.equal(text);
    const box = await notice.boundingBox();
    expect(box, 'the notice has a box').to.not.equal(null);
    expect(box!.y, `notice top ${box!.y} within the viewport`).to.be.at.least(0);
    expect(box!.y + box!.height, 'notice bottom within the viewport').to.be.at.most(PHONE.height);
  }

  /** Each word (a run of letters and digits) on one line: long names and hosts wrap between words or at dots and hyphens, never inside a word. */
  async function wordsWhole(page: Page, selector: string): Promise<void> {
    const split = await page.evaluate(`(() => {
      const out = [];
      for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const m of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            if (tops.size > 1) out.push(m[0]);
          }
        }
      }
      return out;
    })()`) as string[];
    expect(split, `words broken across lines in ${selector}`).to.deep.equal([]);
  }

  return { check, authorizationUrl, signIn, codeFromLetter, expectNoticeInView, wordsWhole };
}
