import { expect } from 'chai';
import { SafeHtml, escapeHtml, fillHtml, html, raw } from '../../src/text/html.ts';

describe('escapeHtml', () => {
  it('escapes the five significant characters', () => {
    expect(escapeHtml(`&<>"'`)).to.equal('&amp;&lt;&gt;&quot;&#39;');
  });

  it('leaves ordinary text alone and does not double-decode', () => {
    expect(escapeHtml('Grüße, café — ok')).to.equal('Grüße, café — ok');
    expect(escapeHtml('&amp;')).to.equal('&amp;amp;');
  });
});

describe('html template', () => {
  it('returns SafeHtml whose toString is the markup', () => {
    const out = html`<p>${'hi'}</p>`;
    expect(out).to.be.instanceOf(SafeHtml);
    expect(out.toString()).to.equal('<p>hi</p>');
    expect(`${out}`).to.equal('<p>hi</p>');
  });

  it('escapes text interpolations', () => {
    expect(html`<p>${'<script>alert(1)</script>'}</p>`.toString()).to.equal(
      '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
  });

  it('cannot break out of double- or single-quoted attributes', () => {
    const hostile = `"><img src=x onerror=alert(1)>`;
    expect(html`<input value="${hostile}">`.toString()).to.equal(
      '<input value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">',
    );
    expect(html`<input value='${"' onfocus='x"}'>`.toString()).to.equal(
      "<input value='&#39; onfocus=&#39;x'>",
    );
  });

  it('does not re-escape nested templates but escapes inside them', () => {
    const inner = html`<b>${'a&b'}</b>`;
    expect(html`<p>${inner}</p>`.toString()).to.equal('<p><b>a&amp;b</b></p>');
  });

  it('joins arrays, escaping strings and trusting SafeHtml', () => {
    const items = ['<x>', html`<i>y</i>`, 'z'];
    expect(html`<ul>${items}</ul>`.toString()).to.equal('<ul>&lt;x&gt;<i>y</i>z</ul>');
    expect(html`${['a', 'b'].map((s) => html`<li>${s}</li>`)}`.toString()).to.equal('<li>a</li><li>b</li>');
  });

  it('renders null, undefined and false as empty', () => {
    expect(html`[${null}${undefined}${false}]`.toString()).to.equal('[]');
  });

  it('renders numbers', () => {
    expect(html`${42}`.toString()).to.equal('42');
  });

  it('raw passes trusted markup through', () => {
    expect(html`${raw('<br>')}`.toString()).to.equal('<br>');
    expect(html`${'<br>'}`.toString()).to.equal('&lt;br&gt;');
  });
});

describe('fillHtml', () => {
  it('escapes the template text and inserts rendered params', () => {
    const out = fillHtml('A & {email} <b>', { email: html`<strong>${'<e>'}</strong>` });
    expect(out.toString()).to.equal('A &amp; <strong>&lt;e&gt;</strong> &lt;b&gt;');
  });

  it('leaves unknown placeholders as text', () => {
    expect(fillHtml('{x} {y}', { x: 'X' }).toString()).to.equal('X {y}');
  });
});
