/** The console page's connected sites: each site's tile, its links and forms, and the logos. */
import { expect } from 'chai';

import { consolePage } from '../../views/console.ts';
import { element, input, items, site, T2 } from '../helpers/console-views.ts';
import { BREAKOUT, count, forms, links, tags, text } from '../helpers/html.ts';

const LOGO = 'data:image/png;base64,iVBORw0KGgo=';

describe('consolePage', () => {
  describe('connected sites', () => {
    it('shows logo, name, dates, access in words and status', () => {
      const page = consolePage(input()).html;
      const [shop = '', news = '', game = ''] = items(element(page, 'section', 'sites'), 'tile');
      expect(shop).to.include('<a href="https://shop.example/" rel="noopener noreferrer" target="_blank"><bdi>Book Shop</bdi><span class="visually-hidden"> (opens in a new tab)</span></a>');
      expect(shop).to.include('<p class="host">shop.<wbr>example</p>');
      expect(shop).to.include('<img class="logo logo-md" src="https://shop.example/logo.png" alt="" width="44" height="44" referrerpolicy="no-referrer"');
      expect(shop).to.include('<dt>First signed in</dt><dd><time datetime="2025-01-12T09:30:00.000Z">Jan 12, 2025, 9:30 AM</time></dd>');
      expect(shop).to.include('<dt>Last signed in</dt><dd><time datetime="2026-03-02T18:05:00.000Z">Mar 2, 2026, 6:05 PM</time></dd>');
      expect(shop).to.include('<li class="chip">Your identity</li><li class="chip">Your email address</li>');
      expect(shop).to.not.include('Can act while you are signed out');
      expect(shop).to.include('<span class="badge badge-ok">Connected</span>');
      expect(shop).to.include('<dt>Last used</dt><dd>Not yet</dd>');
      expect(links(shop).map((l) => [l.attrs.href, text(l.text)])).to.deep.equal([
        ['https://shop.example/', 'Book Shop (opens in a new tab)'],
        ['/console/sites/shop', 'About Book Shop'],
        ['/console/sites/shop/remove-access', 'Remove access of Book Shop…'],
        ['/console/sites/shop/block', 'Block Book Shop…'],
      ]);
      expect(forms(shop)).to.have.length(0);

      // No https uri: the name is not a link; unknown scopes as code; offline access once.
      expect(news).to.include('<h3 id="site-1"><bdi>Daily News</bdi></h3>');
      expect(news).to.include('<li class="chip">Your profile</li><li class="chip"><code>orders:read</code></li><li class="chip chip-warn">Can act while you are signed out</li>');
      expect(count(news, /Can act while you are signed out/g)).to.equal(1);

      expect(game).to.include('<span class="badge badge-danger">Blocked</span>');
      expect(game).to.include('Blocked on <time datetime="2026-01-05T08:15:00.000Z">Jan 5, 2026, 8:15 AM</time>');
      expect(links(game).map((l) => l.attrs.href).slice(0, 2)).to.deep.equal(['https://shop.example/', '/console/sites/game']);
      expect(forms(game).map((f) => f.attrs.action)).to.deep.equal(['/console/sites/game/unblock']);
    });

    it('shows offline_access from either source once', () => {
      for (const over of [{ offlineAccess: true }, { scopes: ['openid', 'offline_access'] }, { scopes: ['offline_access'], offlineAccess: true }]) {
        const page = consolePage(input({ sites: [site(over)] })).html;
        expect(count(page, /Can act while you are signed out/g)).to.equal(1);
        expect(page).to.not.include('<code>offline_access</code>');
      }
    });

    it('links a site only to an https uri', () => {
      for (const uri of ['http://shop.example/', 'javascript:alert(1)', 'data:text/html,x', '//shop.example', 'not a url', '/relative']) {
        const page = consolePage(input({ sites: [site({ uri })], inbox: { items: [], unread: 0, next: null, cursor: null } })).html;
        expect(links(element(page, 'section', 'sites')).map((l) => l.attrs.href), uri).to.deep.equal(['/console/sites/shop', '/console/sites/shop/remove-access', '/console/sites/shop/block', '/console/remove-access']);
      }
    });

    it('encodes client ids in the routes', () => {
      const page = consolePage(input({ sites: [site({ clientId: 'a/b?c#d' }), site({ clientId: 'x y', status: 'blocked', blockedAt: T2 })] })).html;
      expect(tags(page, 'a').map((a) => a.attrs.href)).to.include('/console/sites/a%2Fb%3Fc%23d/block');
      expect(forms(page).map((f) => f.attrs.action)).to.include('/console/sites/x%20y/unblock');
    });

    it('has an empty state', () => {
      const page = consolePage(input({ sites: [] })).html;
      expect(element(page, 'section', 'sites')).to.include('<p class="empty">You have not signed in to any site with your Example ID account yet.</p>');
    });
  });

  describe('logos', () => {
    function logoOf(logoUri: string | null): string {
      const page = consolePage(input({ sites: [site({ logoUri, name: 'zed' })], senders: [], inbox: { items: [], unread: 0, next: null, cursor: null } })).html;
      return element(page, 'section', 'sites');
    }

    it('renders https and data: image logos as decorative images', () => {
      expect(logoOf('https://cdn.example/a b.png')).to.include('<img class="logo logo-md" src="https://cdn.example/a%20b.png" alt="" width="44" height="44" referrerpolicy="no-referrer" loading="lazy" decoding="async">');
      expect(logoOf(LOGO)).to.include(`<img class="logo logo-md" src="${LOGO}" alt=""`);
    });

    it('falls back to a letter avatar for anything else', () => {
      for (const logoUri of [null, '', 'http://cdn.example/a.png', 'javascript:alert(1)', 'data:text/html,<script>x</script>', '/logo.png', '//cdn.example/a.png', `https://x.example/${BREAKOUT}`.replace('https', 'ftp')]) {
        const section = logoOf(logoUri);
        expect(section, String(logoUri)).to.not.include('<img');
        expect(section, String(logoUri)).to.match(/<span class="logo logo-md avatar av-\d" aria-hidden="true">Z<\/span>/);
      }
    });

    it('escapes a hostile https logo URL', () => {
      const section = logoOf(`https://x.example/${BREAKOUT}`);
      expect(tags(section, 'img')).to.have.length(1);
      expect(tags(section, 'img')[0]?.attrs.src).to.equal('https://x.example/%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E');
    });

    it('avatars use the first letter of the name, any script', () => {
      const page = consolePage(input({ sites: [site({ logoUri: null, name: '  «مكتبة»' }), site({ logoUri: null, name: '' })] })).html;
      expect(page).to.match(/aria-hidden="true">م<\/span>/);
      expect(page).to.match(/aria-hidden="true">\?<\/span>/);
    });
  });
});
