/** The confirmation before Block site. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { blockConfirmPage } from '../../views/console.ts';
import { expectConsolePage, site } from '../helpers/console-views.ts';
import { ESCAPED_BREAKOUT, ESCAPED_SCRIPT, forms, HOSTILE, links, SCRIPT, text } from '../helpers/html.ts';

describe('blockConfirmPage', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = blockConfirmPage({ locale, serviceName: 'Example ID', csrf: 'tok', site: site() });
      expectConsolePage(page, locale);
      expect(page.html).to.include(`<title>${t(locale, 'console.block.title', { siteName: 'Book Shop' })} — Example ID</title>`);
      expect(page.html).to.include(`<h1>${t(locale, 'console.block.title').replace('{siteName}', '<bdi>Book Shop</bdi>')}</h1>`);
      for (const key of ['console.block.access', 'console.block.signin', 'console.block.messages', 'console.block.ask'] as const) {
        expect(page.html).to.include(`<li>${t(locale, key).replace(/\{siteName\}/g, '<bdi>Book Shop</bdi>')}</li>`);
      }
      expect(page.html).to.not.include('<body class="wide">');
    });
  }

  it('says what happens, and has one danger form and a Cancel link', () => {
    const page = blockConfirmPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', site: site({ clientId: 'a/b' }), accountEmail: 'ann@example.com' });
    expect(text(page.html)).to.include(
      'This is what happens when you block Book Shop: Book Shop loses its access to your account at once and is signed out. ' +
      'Book Shop can no longer sign you in or get tokens for your account. Book Shop cannot send you messages. ' +
      'If Book Shop sends you here to sign in, you will be asked whether to unblock it.',
    );
    const all = forms(page.html);
    expect(all.map((f) => [f.attrs.action, f.buttons.map((b) => [b.attrs.class, text(b.text)])])).to.deep.equal([
      ['/console/sites/a%2Fb/block', [['danger', 'Block Book Shop']]],
    ]);
    const cancel = links(page.html).find((l) => l.text === 'Cancel');
    expect(cancel?.attrs).to.deep.equal({ class: 'button secondary', href: '/console#sites' });
    expect(page.html).to.include('Signed in as <strong><bdi>ann@example.com</bdi></strong>');
    expect(page.html).to.include('<a href="/session/end">Sign out</a>');
  });

  it('escapes a hostile site name', () => {
    const page = blockConfirmPage({ locale: 'en', serviceName: 'S', csrf: 'tok', site: site({ name: HOSTILE, logoUri: 'javascript:alert(1)' }) });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include(`Block <bdi>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</bdi>`);
    expect(page.html).to.include(`<title>Block ${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}? — S</title>`);
  });
});
