import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { siteDetailPage, type SiteDetailView } from '../../views/console/site-detail.ts';
import { sessionsPage } from '../../views/console/sessions.ts';
import { theftLetter } from '../../views/letters/theft.ts';

const site = (over: Partial<SiteDetailView> = {}): SiteDetailView => ({
  clientId: 'shop', name: 'Book <Shop>', uri: 'https://shop.example/', logoUri: null,
  firstSignInAt: Date.UTC(2026, 0, 2), lastSignInAt: Date.UTC(2026, 1, 3), lastUsedAt: Date.UTC(2026, 1, 4),
  scopes: ['openid', 'email'], offlineAccess: true, status: 'connected',
  policyUri: 'https://shop.example/privacy', tosUri: 'https://evil.example/terms', ownHosts: ['shop.example', 'app.shop.example'],
  messages: { muted: false, categories: { transactional: 'account_and_email', product: 'account', promotions: 'off' } },
  ...over,
});
const common = { locale: 'en' as const, serviceName: 'Example ID', csrf: 'tok' };
const hrefs = (page: string) => [...page.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]);

describe('a site\'s page, the devices page and the theft letter (views)', () => {
  it('links only the site\'s own https hosts, escapes its words and says what it can access in plain words', () => {
    const page = siteDetailPage({ ...common, site: site() }).html;
    expect(page).to.include('<h1><bdi>Book &lt;Shop&gt;</bdi></h1>');
    expect(hrefs(page)).to.include.members(['https://shop.example/', 'https://shop.example/privacy']);
    expect(hrefs(page)).to.not.include('https://evil.example/terms');
    expect(page).to.include('<bdi dir="ltr">https://evil.example/terms</bdi>');
    expect(page).to.include(`<li>${t('en', 'consent.scope.email')}</li>`);
    expect(page).to.include(t('en', 'consent.scope.offline_access'));
    expect(page).to.include('<dt>Promotions</dt><dd>Off</dd>');
    expect(hrefs(page)).to.include.members(['/console/sites/shop/remove-access?from=site', '/console/sites/shop/block']);
    for (const uri of ['http://shop.example/', 'javascript:alert(1)', 'https://shop.example.evil.com/']) {
      expect(hrefs(siteDetailPage({ ...common, site: site({ uri, policyUri: uri, tosUri: null }) }).html), uri).to.not.include(uri);
    }
  });

  it('offers no Remove access once removed, and only Unblock when blocked', () => {
    const removed = siteDetailPage({ ...common, site: site({ status: 'access_removed', accessRemovedAt: Date.UTC(2026, 2, 1), messages: null }) }).html;
    expect(removed).to.not.include('/remove-access');
    expect(removed).to.include('<span class="badge badge-neutral">No access</span>');
    const blocked = siteDetailPage({ ...common, site: site({ status: 'blocked', blockedAt: Date.UTC(2026, 2, 1), messages: null }) }).html;
    expect(hrefs(blocked).filter((h) => h!.startsWith('/console/sites/'))).to.deep.equal([]);
    expect(blocked).to.include('action="/console/sites/shop/unblock"');
  });

  it('names devices in plain words, marks this one, and offers a sign-out form for the others only', () => {
    const at = Date.UTC(2026, 3, 1);
    const page = sessionsPage({ ...common, sessions: [
      { id: 'a b', current: false, browser: 'Safari', os: 'iPhone', firstSeenAt: at, lastSeenAt: at, expiresAt: at + 1, sites: [{ clientId: 'shop', name: '<b>Shop</b>' }] },
      { id: 'me', current: true, firstSeenAt: at, lastSeenAt: at - 1, expiresAt: at + 1, sites: [] },
    ] }).html;
    expect(page).to.include('<h3 id="session-0">A browser on an unknown system</h3>');
    expect(page).to.include('<h3 id="session-1">Safari on iPhone</h3>');
    expect(page).to.include('<li class="chip"><bdi>&lt;b&gt;Shop&lt;/b&gt;</bdi></li>');
    expect(page).to.include('action="/console/sessions/a%20b/end"').and.not.include('/console/sessions/me/end');
  });

  for (const locale of LOCALES) {
    it(`writes the theft letter in ${locale}, with its headers and no link in the site's name`, () => {
      const letter = theftLetter({ locale, serviceName: 'Example ID', siteName: 'evil.com\u202E', at: Date.UTC(2026, 10, 20, 9, 58), sessionsUrl: 'https://id.example/console/sessions' });
      expect(letter.headers).to.deep.equal({ 'Auto-Submitted': 'auto-generated', 'Content-Language': locale });
      expect(letter.subject).to.not.include('\u202E').and.not.include('evil.com');
      expect(letter.text).to.include('evil\u2060.\u2060com');
      expect(letter.html).to.include(`lang="${locale}"`).and.include('href="https://id.example/console/sessions"');
      expect(letter.text).to.include(t(locale, 'theft.check'));
    });
  }
});
