/**
 * The README's relying site ("A relying site with openid-client v6"), run
 * as written against the reference provider: the block is written to a file
 * and imported as a site would run it, with its settings in the
 * environment; a person signs in through the service's pages (the test is
 * the browser), the site notifies them, introspects, revokes, and signs
 * them out with its ID token as hint.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { siteClient, startHarness, throughSignInPages, type Harness } from '../helpers/reference.ts';
import { readmeBlock, ROOT } from '../package/app.ts';

/** What the README's site.js exports. */
interface ReadmeSite {
  config: oidc.Configuration;
  signInUrl(session: Record<string, string>): Promise<URL>;
  callback(session: Record<string, string>, currentUrl: URL): Promise<void>;
  signOutUrl(session: Record<string, string>): URL;
  revoke(token: string): Promise<void>;
  introspect(token: string): Promise<oidc.IntrospectionResponse>;
  notify(sub: string, message: Record<string, string>): Promise<{ status: number; body: unknown }>;
}

const SHOP = 'https://shop.example';

describe('the README\'s relying site (openid-client v6), as written, against the reference provider', () => {
  let h: Harness;
  let site: ReadmeSite;
  let dir: string;
  const client = siteClient('readme-shop', {
    client_name: 'Readme Shop', client_uri: SHOP,
    redirect_uris: [`${SHOP}/callback`], post_logout_redirect_uris: [`${SHOP}/signed-out`],
  });

  before(async () => {
    h = await startHarness('readme-site', { clients: [client] });
    // Beside the repository's node_modules (openid-client resolves as in a site's app); git-ignored.
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    dir = mkdtempSync(join(ROOT, 'test-artifacts', 'readme-site-'));
    writeFileSync(join(dir, 'site.js'), readmeBlock('site.js', 'site-file'));
    const settings = { ISSUER: h.issuer, SITE_URL: SHOP, CLIENT_ID: client.client_id, CLIENT_SECRET: client.client_secret! };
    const before = Object.fromEntries(Object.keys(settings).map((k) => [k, process.env[k]]));
    Object.assign(process.env, settings);
    try {
      site = await import(pathToFileURL(join(dir, 'site.js')).href) as ReadmeSite;
    } finally {
      for (const [k, v] of Object.entries(before)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  });
  after(async () => {
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('discovers with client_secret_basic, signs in with PKCE, notifies (202), introspects, revokes one token, and signs out with the ID token as hint', async () => {
    expect(site.config.serverMetadata().issuer).to.equal(h.issuer);
    const session: Record<string, string> = {};
    const agent = new Agent();
    const isCallback = (u: string) => u.startsWith(`${SHOP}/callback`);
    const { res } = await throughSignInPages(h, agent, await agent.get((await site.signInUrl(session)).href), isCallback, 'readme-buyer@example.com');
    await site.callback(session, new URL(res.location!));
    expect(session.sub).to.be.a('string');

    expect(await site.notify(session.sub!, { category: 'transactional', title: 'Your order has shipped', body: 'It arrives on Tuesday.', url: `${SHOP}/orders/1234` }))
      .to.deep.equal({ status: 202, body: { inApp: true, email: true, skipped: null } });
    expect(await site.notify(session.sub!, { category: 'newsletter', title: 'Hi', body: 'Hello.' })).to.deep.include({ status: 400 });

    const live = await site.introspect(session.accessToken!);
    expect(live).to.include({ active: true, client_id: 'readme-shop', sub: session.sub });
    expect(live.scope).to.equal('openid email');
    expect((await site.introspect(session.refreshToken!)).active).to.equal(true);

    await site.revoke(session.refreshToken!);
    expect(await site.introspect(session.refreshToken!)).to.deep.equal({ active: false });
    expect((await site.introspect(session.accessToken!)).active).to.equal(true);

    const page = await agent.get(site.signOutUrl(session).href);
    expect(page.status).to.equal(200);
    const back = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
    expect([back.status, back.location]).to.deep.equal([303, `${SHOP}/signed-out?state=${session.signOutState}`]);
    expect(await site.introspect(session.accessToken!)).to.deep.equal({ active: false });
  });
});
