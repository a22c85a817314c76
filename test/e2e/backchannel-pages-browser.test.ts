/**
 * What became of each site's back-channel logout, as a person sees it in
 * Chromium (docs/backchannel-logout.md): the signed-out page and the console
 * at 390 px and on a desktop, axe-core clean, no sideways scrolling, with a
 * long site name and its own address; and without JavaScript.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { Agent } from '../helpers/agent.ts';
import { checkPage, PHONE } from '../helpers/axe.ts';
import { launchChromium, mark, problems, type Chromium } from '../helpers/browser.ts';
import { freePort } from '../helpers/net.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const NAME = 'Northwind Shop Outfitters International Customer Accounts';
const ADDRESS = 'https://northwind-shop-outfitters-international.example/account/sign-out';

describe('back-channel logout outcomes in Chromium at 390 px and on a desktop (axe-core)', function () {
  this.timeout(120_000);
  let h: Harness;
  let chromium: Chromium;
  let config: Awaited<ReturnType<typeof discover>>;

  before(async () => {
    // A site whose back-channel endpoint is down: nothing listens on that port.
    const down = siteClient('bcl-pages', { client_name: NAME, client_uri: ADDRESS, backchannel_logout_uri: `http://127.0.0.1:${await freePort()}/logout` });
    h = await startHarness('bcl-pages', {
      clients: [down],
      allowPrivateFetchHosts: ['127.0.0.1'],
      // The queue's one retry 2 s after the first try: the signed-out page is shown before it.
      plugin: { backchannelLogout: { attempts: 2, backoffMs: 2000, giveUpAfterMs: 60_000 } },
    });
    config = await discover(h, down);
    chromium = await launchChromium({ viewport: PHONE });
  });
  after(async () => {
    await chromium?.close();
    await h?.close();
  });

  /** A browser context holding the agent's cookies for the service. */
  async function contextOf(agent: Agent, javaScriptEnabled: boolean) {
    const context = await chromium.newContext({ viewport: PHONE, javaScriptEnabled });
    const host = new URL(h.issuer).host;
    await context.addCookies([...agent.cookies.get(host) ?? []].map(([name, value]) => ({ name, value, url: `${h.issuer}/` })));
    return context;
  }

  it('the console says the site could not be reached, with the way there, and the signed-out page lists the site', async () => {
    const from = mark(chromium.log);
    const agent = new Agent();
    await signIn(h, config, agent, 'bcl-pages@example.com');
    const id = (await h.reference.accounts.findByEmail('bcl-pages@example.com'))!.accountId;
    expect(await h.reference.plugin.removeAccess(id, 'bcl-pages')).to.equal('removed');
    const unreachable = t('en', 'logouts.unreachable', { site: NAME });
    for (let i = 0; i < 400 && !(await agent.get(`${h.issuer}/console`)).body.includes('could not be reached'); i += 1) await sleep(25);

    const found: string[] = [];
    for (const javaScriptEnabled of [true, false]) {
      const context = await contextOf(agent, javaScriptEnabled);
      const page = await context.newPage();
      await page.goto(`${h.issuer}/console`);
      const section = page.getByRole('region', { name: t('en', 'logouts.console_title') });
      expect(await section.locator('li').innerText()).to.equal(`${unreachable} ${t('en', 'logouts.go', { site: NAME })}`);
      expect(await section.getByRole('link', { name: t('en', 'logouts.go', { site: NAME }) }).getAttribute('href')).to.equal(ADDRESS);
      // axe runs in the page: with JavaScript on only.
      if (javaScriptEnabled) found.push(...await checkPage(page, 'console'));
      await context.close();
    }

    // A sign-out of a session at the site: its first try fails, the page says so.
    const again = new Agent();
    await signIn(h, config, again, 'bcl-pages-2@example.com');
    const context = await contextOf(again, true);
    const page = await context.newPage();
    await page.goto(`${h.issuer}/session/end`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
    expect(await page.getByRole('region', { name: t('en', 'logouts.title') }).locator('li').innerText()).to.equal(t('en', 'logouts.pending', { site: NAME }));
    found.push(...await checkPage(page, 'signed out, pending'));
    // Given up a moment later: the page, reloaded, says where to sign out by hand.
    for (let i = 0; i < 400; i += 1) {
      await page.reload();
      if ((await page.locator('main').innerText()).includes(unreachable)) break;
      await sleep(25);
    }
    expect(await page.getByRole('link', { name: t('en', 'logouts.go', { site: NAME }) }).getAttribute('href')).to.equal(ADDRESS);
    found.push(...await checkPage(page, 'signed out, could not be reached'));
    await context.close();

    expect(found, found.join('\n')).to.deep.equal([]);
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
  });
});
