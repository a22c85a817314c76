/** The layout every page is rendered in: the document, its CSP and headers, and the wide mode of the console. */
import { expect } from 'chai';

import { html } from '../../src/text/html.ts';
import { PAGE_STYLE_HASH, pageHeaders, renderPage } from '../../views/layout.ts';
import { expectCommonPage, styleHash } from '../helpers/html.ts';

describe('layout', () => {
  const page = renderPage({ locale: 'de', title: 'T<1>', main: html`<h1>x</h1>`, serviceName: 'Acme "ID"' });

  it('renders a complete document with an escaped title', () => {
    expectCommonPage(page, 'de');
    expect(page.html).to.include('<title>T&lt;1&gt; — Acme &quot;ID&quot;</title>');
    expect(page.html).to.match(/<header\b[^>]*>Acme &quot;ID&quot;<\/header>/);
    expect(page.html).to.match(/<footer\b/);
  });

  it('CSP pins the real hash of the inline style', () => {
    const hash = styleHash(page.html);
    expect(hash).to.equal(PAGE_STYLE_HASH);
    expect(page.csp).to.equal(
      `default-src 'none'; style-src 'sha256-${hash}'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
  });

  it('adds form-action origins and refuses anything that is not an http(s) origin', () => {
    const { csp } = renderPage({
      locale: 'en',
      title: 'x',
      main: html``,
      serviceName: 's',
      formAction: ['https://rp.example/cb?x=1', 'https://rp.example/other', "https://a.example; script-src 'unsafe-inline'", 'javascript:alert(1)', '/relative'],
    });
    expect(csp).to.include("form-action 'self' https://rp.example;");
    expect(csp).to.not.include('script-src');
    expect(csp).to.not.include('javascript');
    expect(csp.split(';')).to.have.length(6);
  });

  it('pageHeaders gives the security headers', () => {
    expect(pageHeaders('CSP')).to.deep.equal({
      'Content-Security-Policy': 'CSP',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
    });
  });
});

/* ---------- The layout's wide mode leaves the other pages alone ---------- */

describe('renderPage wide and headerAside', () => {
  it('keeps the narrow page as it was', () => {
    const page = renderPage({ locale: 'en', title: 'x', main: html`<h1>x</h1>`, serviceName: 'S' }).html;
    expect(page).to.include('<body>\n<a class="skip" href="#main">Skip to main content</a>\n<header class="site-header">S</header>\n<main id="main" tabindex="-1">');
  });

  it('adds the wide class and the header aside', () => {
    const page = renderPage({ locale: 'en', title: 'x', main: html`<h1>x</h1>`, serviceName: 'S<', wide: true, headerAside: html`<span class="account">A</span>` }).html;
    expect(page).to.include('<body class="wide">');
    expect(page).to.include('<header class="site-header has-aside"><span class="brand">S&lt;</span><span class="account">A</span></header>');
  });
});
