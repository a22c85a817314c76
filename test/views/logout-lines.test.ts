/**
 * The lines that say what became of each site's back-channel logout
 * (views/logouts.ts): every state in every language, the site's own address
 * only for a site that could not be reached, names escaped.
 */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { logoutLines } from '../../views/logouts.ts';

describe('back-channel logout lines', () => {
  it('says each state in every language, with the way to the site only when it could not be reached', () => {
    for (const locale of LOCALES) {
      const out = String(logoutLines(locale, [
        { site: 'Alpha', state: 'signed_out', url: 'https://alpha.example/' },
        { site: 'Beta', state: 'pending' },
        { site: 'Gamma', state: 'unreachable', url: 'https://gamma.example/account' },
      ]));
      expect(out, locale).to.include(`<h2>${escapeHtml(t(locale, 'logouts.title'))}</h2>`);
      expect(out, locale).to.include(`<li class="logout-signed_out">${escapeHtml(t(locale, 'logouts.signed_out', { site: 'Alpha' }))}</li>`);
      expect(out, locale).to.include(`<li class="logout-pending">${escapeHtml(t(locale, 'logouts.pending', { site: 'Beta' }))}</li>`);
      expect(out, locale).to.include(`<li class="logout-unreachable"><strong>${escapeHtml(t(locale, 'logouts.unreachable', { site: 'Gamma' }))}</strong> <a href="https://gamma.example/account">${escapeHtml(t(locale, 'logouts.go', { site: 'Gamma' }))}</a></li>`);
      expect(out, locale).to.not.include('alpha.example');
    }
  });

  it('shows nothing without logouts, and escapes a site\'s name', () => {
    expect(logoutLines('en', [])).to.equal(null);
    const out = String(logoutLines('en', [{ site: '<b>Evil</b>', state: 'unreachable' }], false));
    expect(out).to.include('&lt;b&gt;Evil&lt;/b&gt;').and.not.include('<b>Evil');
    expect(out).to.not.include('<h2>').and.not.include('<a ');
  });
});
