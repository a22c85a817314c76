/** neutralizeLinks: properties over generated text (fast-check), checked against a reference of the rules written here. */
import { expect } from 'chai';
import fc from 'fast-check';

import { neutralizeLinks, type TextPlace } from '../../src/text/neutralize-links.ts';
import { n, W } from '../helpers/neutralize-links.ts';

const PLACES: readonly TextPlace[] = ['title', 'body'];

// The characters a sender could hide next to a dot or `@` (issue 4): soft
// hyphen, ALM, ZWSP/ZWNJ/ZWJ, LRM/RLM, LRE/RLE/PDF/LRO/RLO, WJ and the
// invisible operators, LRI/RLI/FSI/PDI, ZWNBSP. Written out again here rather
// than imported, so that the tests check the module against the issue's list.
const SMUGGLERS: readonly number[] = [
  0x00ad, 0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
  0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff,
];
const isSmuggler = (ch: string | undefined): boolean => ch !== undefined && SMUGGLERS.includes(ch.charCodeAt(0));
// The stops URL parsers read as a dot (UTS #46): FULL STOP, IDEOGRAPHIC, FULLWIDTH, HALFWIDTH IDEOGRAPHIC.
const STOPS: readonly string[] = ['.', '\u3002', '\uFF0E', '\uFF61'];
const isDotOrAt = (ch: string | undefined): boolean => (ch !== undefined && STOPS.includes(ch)) || ch === '@';

/** Reference for step 1: `text` without every run of smuggling characters that touches a `.` or `@`. */
function withoutSmuggling(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (!isSmuggler(text[i])) {
      out += text[i];
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && isSmuggler(text[j])) j++;
    if (!isDotOrAt(text[i - 1]) && !isDotOrAt(text[j])) out += text.slice(i, j);
    i = j;
  }
  return out;
}

/**
 * Aligns `output` with `input` on the assumption that `output` is `input` with
 * separators inserted, and returns the input indexes before which one was
 * inserted; `null` when `output` is anything else. (Unambiguous here: an
 * inserted separator sits between a label character and a dot, where `input`
 * has no separator of its own once smuggling characters are removed.)
 */
function insertions(input: string, output: string): number[] | null {
  const at: number[] = [];
  let i = 0;
  for (let j = 0; j < output.length; j++) {
    if (i < input.length && output[j] === input[i]) i++;
    else if (output[j] === W) at.push(i);
    else return null;
  }
  return i === input.length ? at : null;
}

/** Rule 7 and the smuggling rule for any input and place: only pairs of separators around dots, idempotently. */
function checkInvariants(input: string, where: TextPlace): void {
  const label = `${where} ${JSON.stringify(input)}`;
  const output = neutralizeLinks(input, where);
  const clean = withoutSmuggling(input);
  if (!input.includes(W)) expect(output.replaceAll(W, ''), label).to.equal(clean);
  const at = insertions(clean, output);
  expect(at, label).to.not.equal(null);
  // Separators come in pairs around one dot: before it (index d) and after it (index d + 1).
  expect((at ?? []).length % 2, label).to.equal(0);
  for (let k = 0; k < (at ?? []).length; k += 2) {
    const d = at![k]!;
    expect(STOPS, label).to.include(clean[d]);
    expect(at![k + 1], label).to.equal(d + 1);
  }
  expect(neutralizeLinks(output, where), `${label} idempotent`).to.equal(output);
}

describe('neutralizeLinks', () => {
  it('property: only pairs of separators around dots, after removing smuggling characters; idempotent (any string)', () => {
    const place = fc.constantFrom<TextPlace>(...PLACES);
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), place, checkInvariants), { numRuns: 2000 });
    // Fragments that meet in every way: addresses glued to schemes, dots, boundaries, other scripts, smuggling characters.
    const dense = fc.constantFrom(
      'a.com', 'evil.co.uk', 'www.', '10.0.0.1', '1.2.3.256', 'v2.5', 'setup.py', 'report.pdf', 'bücher.de', 'xn--p1ai',
      'рф', 'github.io', 'https://', 'http://', 'HtTpS://', 'https', 'http', '://', '.', '..', 'a', 'com', '1', '255',
      ' ', '/', '\\', '@', ':', '-', '_', '"', '<', '(', ')', ',', '\n', 'é', '\u0301', '中', 'に', '😀', '。', '．', '｡',
      W, '\u200B', '\u00AD', '\u202E', '\u2066', '\uFEFF', '\u061C', '\u180E',
    );
    fc.assert(fc.property(fc.string({ unit: dense, maxLength: 30 }), place, checkInvariants), { numRuns: 5000 });
  });

  it('property: title and body differ only where the text has https:', () => {
    const dense = fc.constantFrom('a.com', 'http://', 'x.io/', ' ', '.', '1.2.3.4', '@', 'h', 'ttp', 's:', '//', '中', '\u200B');
    fc.assert(
      fc.property(fc.string({ unit: dense, maxLength: 30 }), (input) => {
        fc.pre(!/https:/i.test(withoutSmuggling(input)));
        expect(neutralizeLinks(input, 'body')).to.equal(neutralizeLinks(input, 'title'));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: an https:// address in the body is byte-identical, whatever it contains', () => {
    const urlPart = fc.constantFrom(
      'evil.com', 'a.b', '10.0.0.1', '1.2.3.256', '/', '.', 'x.html', '?q=', '&ip=', 'bücher.de', '@', ':8443', '#',
      '%2E', '(', ')', ',', "'", '!', '*', '+', ';', '=', '~', 'https://', 'http://', 'www.', '..', '-', '_', 'readme.md',
      '例子.中国', 'mail.example.org',
    );
    const url = fc
      .tuple(fc.constantFrom('https://', 'HTTPS://', 'Https://'), fc.string({ unit: urlPart, maxLength: 12 }))
      .map(([scheme, rest]) => scheme + rest);
    const around = fc.string({ unit: fc.constantFrom('a.com', 'text', '1.2.3.4', '\n', '(', '中', 'é', 'x@y.io', '.', ' '), maxLength: 8 });
    fc.assert(
      fc.property(around, url, around, (before, address, after) => {
        const input = `${before} ${address} ${after}`;
        const expected = `${neutralizeLinks(`${before} `, 'body')}${address}${neutralizeLinks(` ${after}`, 'body')}`;
        expect(neutralizeLinks(input, 'body')).to.equal(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('property: expected result on generated text mixing addresses, IPs, versions, files, URLs and words', () => {
    // Labels start with `q` so that no generated label is itself a public suffix (`co` + `uk`).
    const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/).map((l) => `q${l}`);
    const zone = fc.constantFrom('com', 'net', 'org', 'io', 'de', 'fr', 'co.uk', 'рф', 'xn--p1ai', 'md', 'py', 'zip', 'app', 'dev');
    const domain = fc
      .tuple(fc.array(fc.oneof(label, fc.constantFrom('bücher', 'пример', 'www')), { minLength: 1, maxLength: 3 }), zone, fc.boolean())
      .map(([labels, z, upper]) => {
        const d = [...labels, z].join('.');
        return upper ? d.toUpperCase() : d;
      });
    const octet = fc.integer({ min: 0, max: 255 }).map(String);
    const smuggler = fc.constantFrom(...SMUGGLERS.map((c) => String.fromCharCode(c)));
    type Token = [text: string, title: string, body: string];
    const same = (text: string, out: string): Token => [text, out, out];
    const token: fc.Arbitrary<Token> = fc.oneof(
      domain.map((d) => same(d, n(d))),
      fc.tuple(label, domain).map(([local, d]) => same(`${local}@${d}`, `${local}@${n(d)}`)),
      fc.tuple(octet, octet, octet, octet).map((o) => same(o.join('.'), n(o.join('.')))),
      fc.array(fc.nat(999), { minLength: 2, maxLength: 3 }).map((v) => same(v.join('.'), v.join('.'))),
      fc.tuple(fc.integer({ min: 256, max: 9999 }), octet, octet, octet).map((v) => same(v.join('.'), v.join('.'))),
      fc
        .tuple(label, fc.constantFrom('pdf', 'txt', 'json', 'tar.gz', 'html', 'exe', 'unknownzone'))
        .map(([name, ext]) => same(`${name}.${ext}`, `${name}.${ext}`)),
      fc
        .tuple(fc.constantFrom('https://', 'HTTPS://'), domain, fc.constantFrom('', '/a.b/c.pdf?v=1.2', ':8443/p'))
        .map(([scheme, d, path]): Token => [`${scheme}${d}${path}`, `${scheme}${n(d)}${path}`, `${scheme}${d}${path}`]),
      fc
        .tuple(domain, fc.constantFrom('', '/x', ':80/a.b'))
        .map(([d, path]) => same(`http://${d}${path}`, `http://${n(d)}${path}`)),
      // A smuggling character before or after the dot of a domain: removed, then separated.
      fc.tuple(label, smuggler, fc.boolean(), domain).map(([l, s, before, d]) => {
        const text = before ? `${l}${s}.${d}` : `${l}.${s}${d}`;
        return same(text, n(`${l}.${d}`));
      }),
      fc.constantFrom('Grüße', '中文', 'café', '😀', 'наш', 'العربية', 'ﬁle', 'version', '—').map((w) => same(w, w)),
    );
    const between = fc.constantFrom(' ', '\n', ', ', ' (', ') ', '. ', '! ', ' "', '" ', ': ', '\u00A0', '\u3000', '，');
    fc.assert(
      fc.property(fc.array(fc.tuple(token, between), { maxLength: 25 }), (parts) => {
        const input = parts.map(([[text], sep]) => text + sep).join('');
        const title = parts.map(([[, out], sep]) => out + sep).join('');
        const body = parts.map(([[, , out], sep]) => out + sep).join('');
        expect(neutralizeLinks(input, 'title'), JSON.stringify(input)).to.equal(title);
        expect(neutralizeLinks(input, 'body'), JSON.stringify(input)).to.equal(body);
      }),
      { numRuns: 2000 },
    );
  });
});
