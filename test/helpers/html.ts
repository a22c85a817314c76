/**
 * A tiny HTML reader for the view tests (enough for the pages and letters
 * this project renders, not a parser), the hostile strings they feed in, and
 * what every page of the layout must be.
 */
import { createHash } from 'node:crypto';

import { expect } from 'chai';

import type { Locale } from '../../src/i18n/index.ts';

export const SCRIPT = '<script>alert(1)</script>';
export const BREAKOUT = '"><img src=x onerror=alert(1)>';
export const HOSTILE = `${SCRIPT}${BREAKOUT}`;
export const ESCAPED_SCRIPT = '&lt;script&gt;alert(1)&lt;/script&gt;';
export const ESCAPED_BREAKOUT = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;';
// Spelled out, not taken from direction(): a new locale must be added here on purpose.
export const DIR: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', de: 'ltr', fr: 'ltr', ar: 'rtl' };

export type Tag = { raw: string; attrs: Record<string, string> };
export type Form = { raw: string; attrs: Record<string, string>; body: string; inputs: Tag[]; buttons: { attrs: Record<string, string>; text: string }[] };

export function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/\s([a-z-]+)(?:="([^"]*)")?/g)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

export function tags(source: string, name: string): Tag[] {
  return [...source.matchAll(new RegExp(`<${name}\\b[^>]*>`, 'g'))].map((m) => ({ raw: m[0], attrs: attrs(m[0]) }));
}

export function forms(source: string): Form[] {
  return [...source.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map((m) => ({
    raw: m[0],
    attrs: attrs(m[1] ?? ''),
    body: m[2] ?? '',
    inputs: tags(m[2] ?? '', 'input'),
    buttons: [...(m[2] ?? '').matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].map((b) => ({ attrs: attrs(b[1] ?? ''), text: b[2] ?? '' })),
  }));
}

/** The text of each button of a form, as written in the HTML. */
export function buttonTexts(form: Form | undefined): string[] | undefined {
  return form?.buttons.map((b) => b.text);
}

export function links(source: string): { attrs: Record<string, string>; text: string }[] {
  return [...source.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/g)].map((m) => ({ attrs: attrs(m[1] ?? ''), text: m[2] ?? '' }));
}

/** Text without tags and with entities decoded (enough for these pages). */
export function text(source: string): string {
  return source
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

export function count(source: string, pattern: RegExp): number {
  return [...source.matchAll(pattern)].length;
}

export function labelFor(source: string, id: string): string | undefined {
  return source.match(new RegExp(`<label for="${id}">([^<]*)</label>`))?.[1];
}

/** The base64 SHA-256 of the page's one inline style, as its CSP must name it. */
export function styleHash(page: string): string {
  const style = page.match(/<style>([\s\S]*?)<\/style>/)?.[1];
  expect(style, 'style element').to.be.a('string');
  return createHash('sha256').update(style ?? '', 'utf8').digest('base64');
}

export function expectHostileEscaped(page: string): void {
  expect(page).to.not.include('<script');
  expect(page).to.not.include('<img');
  expect(page).to.include(ESCAPED_SCRIPT);
  expect(page).to.include(ESCAPED_BREAKOUT);
}

/** What every page of the layout must be: a complete, script-free document whose forms post with their CSRF token. */
export function expectCommonPage(page: { html: string; csp: string }, locale: Locale): void {
  expect(page.html).to.match(/^<!doctype html>\n<html /);
  expect(page.html).to.include(`<html lang="${locale}" dir="${DIR[locale]}">`);
  expect(page.html).to.include('<meta charset="utf-8">');
  expect(page.html).to.include('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(page.html).to.include('<meta name="referrer" content="no-referrer">');
  expect(page.html).to.include('<main id="main"');
  expect(count(page.html, /<h1\b/g)).to.equal(1);
  expect(count(page.html, /<style\b/g)).to.equal(1);
  expect(page.html).to.not.match(/<script\b/i);
  expect(page.html).to.not.match(/\son[a-z]+=/i);
  expect(page.html).to.not.match(/<link\b/i);
  // Every form posts and carries the CSRF token.
  for (const form of forms(page.html)) {
    expect(form.attrs.method).to.equal('post');
    expect(form.inputs.filter((i) => i.attrs.type === 'hidden' && i.attrs.name === 'csrf')).to.have.length(1);
  }
}
