import { expect } from 'chai';
import fc from 'fast-check';
import { parse } from 'tldts';

import { LINK_SEPARATOR, isKnownZoneDomain, neutralizeLinks, type TextPlace } from '../../src/text/neutralize-links.ts';

const W = LINK_SEPARATOR;
/** What the function should make of an address: the separator on both sides of every dot. */
const n = (address: string): string => address.replaceAll('.', `${W}.${W}`);
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

/** [input, expected in the title, expected in the body (same as the title when omitted)]. */
type Row = readonly [input: string, title: string, body?: string];

function checkRows(rows: readonly Row[]): void {
  for (const [input, title, body = title] of rows) {
    expect(neutralizeLinks(input, 'title'), `title ${JSON.stringify(input)}`).to.equal(title);
    expect(neutralizeLinks(input, 'body'), `body ${JSON.stringify(input)}`).to.equal(body);
  }
}

/** Rows whose text is the same in the output, in both places. */
const unchanged = (...inputs: string[]): Row[] => inputs.map((input) => [input, input]);

describe('neutralizeLinks', () => {
  it('uses U+2060 WORD JOINER, on both sides of every dot', () => {
    expect(LINK_SEPARATOR).to.equal('\u2060');
    expect(neutralizeLinks('example.com', 'title')).to.equal('example\u2060.\u2060com');
    expect(neutralizeLinks('10.0.0.1', 'body')).to.equal('10\u2060.\u20600\u2060.\u20600\u2060.\u20601');
  });

  it('https:// in the body arrives exactly as written; in the title it is separated', () => {
    checkRows([
      [
        'Details: https://evil.example.com/a.b/c.com?ip=10.0.0.1#x.org now',
        `Details: https://${n('evil.example.com')}/a.b/${n('c.com')}?ip=${n('10.0.0.1')}#${n('x.org')} now`,
        'Details: https://evil.example.com/a.b/c.com?ip=10.0.0.1#x.org now',
      ],
      ['HTTPS://Evil.Example.COM/', `HTTPS://${n('Evil.Example.COM')}/`, 'HTTPS://Evil.Example.COM/'],
      [
        '(https://bücher.de/straße.html), <https://xn--bcher-kva.de>.',
        `(https://${n('bücher.de')}/straße.html), <https://${n('xn--bcher-kva.de')}>.`,
        '(https://bücher.de/straße.html), <https://xn--bcher-kva.de>.',
      ],
      [
        '请访问https://example.com/a.com了解',
        `请访问https://${n('example.com')}/${n('a.com')}了解`,
        '请访问https://example.com/a.com了解',
      ],
      ['https://1.2.3.4:8443/', `https://${n('1.2.3.4')}:8443/`, 'https://1.2.3.4:8443/'],
    ]);
  });

  it('body: an https:// address ends where a URL cannot go on; what follows is judged again', () => {
    checkRows([
      ['https://good.com<evil.com>', `https://${n('good.com')}<${n('evil.com')}>`, `https://good.com<${n('evil.com')}>`],
      ['https://good.com"evil.com"', `https://${n('good.com')}"${n('evil.com')}"`, `https://good.com"${n('evil.com')}"`],
      ['https://good.com\nevil.com', `https://${n('good.com')}\n${n('evil.com')}`, `https://good.com\n${n('evil.com')}`],
      // A zero-width space that touches no dot stays, and ends the address.
      ['https://good.com\u200Bevil.com', `https://${n('good.com')}\u200B${n('evil.com')}`, `https://good.com\u200B${n('evil.com')}`],
      // Non-ASCII punctuation ends it (a sentence goes on); non-ASCII letters do not (IRIs).
      ['请访问https://good.com，或者evil.com。', `请访问https://${n('good.com')}，或者${n('evil.com')}。`, `请访问https://good.com，或者${n('evil.com')}。`],
      ['«https://good.com»evil.com', `«https://${n('good.com')}»${n('evil.com')}`, `«https://good.com»${n('evil.com')}`],
      ['https://bücher.de/straße/evil.com', `https://${n('bücher.de')}/straße/${n('evil.com')}`, 'https://bücher.de/straße/evil.com'],
    ]);
  });

  it('body: only an address that begins with https:// is exempt (not glued, not another scheme)', () => {
    checkRows([
      // Glued to a word or to a domain: not an address beginning with https://.
      ['xhttps://evil.com/', `xhttps://${n('evil.com')}/`],
      ['evil.com.https://good.com/a.com', `${n('evil.com')}.https://${n('good.com')}/${n('a.com')}`],
      ['evil.comhttps://good.com/', `${n('evil.com')}https://${n('good.com')}/`],
      ['evil.comhttp://good.com/', `${n('evil.com')}http://${n('good.com')}/`],
      // Not https: long s, backslashes, other schemes.
      ['httpſ://evil.com', `httpſ://${n('evil.com')}`],
      ['https:\\\\evil.com', `https:\\\\${n('evil.com')}`],
      ['ftp://evil.com/x', `ftp://${n('evil.com')}/x`],
    ]);
  });

  it('http:// addresses are separated in the title and in the body', () => {
    checkRows([
      ['http://evil.example.com/path', `http://${n('evil.example.com')}/path`],
      ['http://10.0.0.1:8080/admin.php', `http://${n('10.0.0.1')}:8080/admin.php`],
      ['HTTP://EVIL.COM', `HTTP://${n('EVIL.COM')}`],
      ['http://user:pw@evil.com/login.html', `http://user:pw@${n('evil.com')}/login.html`],
      ['see http://evil.com/a.com.', `see http://${n('evil.com')}/${n('a.com')}.`],
    ]);
  });

  it('separates every dot of a bare domain or IPv4 address, between punctuation or at the end of a sentence', () => {
    checkRows([
      ['evil.example.com', `evil${W}.${W}example${W}.${W}com`],
      ['Log in at www.evil.com today', `Log in at ${n('www.evil.com')} today`],
      ['bank.co.uk', n('bank.co.uk')],
      ['EVIL.Example.COM', n('EVIL.Example.COM')],
      ['server 192.168.0.1 answered', `server ${n('192.168.0.1')} answered`],
      ['Visit example.com.', `Visit ${n('example.com')}.`],
      ['(example.com), "example.com"; example.com!', `(${n('example.com')}), "${n('example.com')}"; ${n('example.com')}!`],
      ['.example.com', `.${n('example.com')}`],
      // Hyphens and underscores at the edges are punctuation, not part of the name.
      ['--example.com-- and _example.com_', `--${n('example.com')}-- and _${n('example.com')}_`],
      ['-evil.com', `-${n('evil.com')}`],
      ['--.example.com', `--.${n('example.com')}`],
      ['_dmarc.example.com', n('_dmarc.example.com')],
      // `.next` is an ICANN zone: a sentence without a space after its dot is a domain too.
      ['the end.Next', `the ${n('end.Next')}`],
    ]);
  });

  it('separates the domain of an e-mail address (and a dotted local part only when it is itself a domain)', () => {
    checkRows([
      ['write to user@example.com', `write to user@${n('example.com')}`],
      ['user@mail.example.com', `user@mail${W}.${W}example${W}.${W}com`],
      ['first.last@mail.example.org', `first.last@${n('mail.example.org')}`],
      ['mailto:help@example.io', `mailto:help@${n('example.io')}`],
      ['john.me@example.com', `${n('john.me')}@${n('example.com')}`],
      ['root@10.0.0.1', `root@${n('10.0.0.1')}`],
    ]);
  });

  it('separates a domain or IPv4 address followed by a port or a path', () => {
    checkRows([
      ['example.com:8080/path/x.html?q=1', `${n('example.com')}:8080/path/x.html?q=1`],
      ['evil.com/login.php', `${n('evil.com')}/login.php`],
      ['10.0.0.1:22', `${n('10.0.0.1')}:22`],
      ['see 10.0.0.1.', `see ${n('10.0.0.1')}.`],
    ]);
  });

  it('zones that are also file extensions are real zones: readme.md, setup.py and the like are separated', () => {
    checkRows([
      ['readme.md', `readme${W}.${W}md`],
      ['setup.py', `setup${W}.${W}py`],
      ...['main.rs', 'archive.zip', 'run.sh', 'clip.mov', 'index.md', 'Makefile.pl'].map((t): Row => [t, n(t)]),
    ]);
  });

  it('leaves versions, file names without a zone, unknown zones and partial names unchanged', () => {
    checkRows(
      unchanged(
        'report.pdf', 'notes.txt', '1.2', 'version 2.5', 'a.b', 'host.unknownzone', 'bücher.unknownzone',
        'config.json', 'archive.tar.gz', 'index.html', 'v1.2.3', 'e.g. i.e. U.S.A.', 'example.comx',
        'example.test', 'printer.local', 'example.invalid', 'evil.example', 'example.localhost',
        // A public suffix alone has no registrable domain (`co.uk`; `*.ck` is a wildcard rule).
        'co.uk', 'a.ck',
        // Not hostnames (tldts validation): a label may not end with a hyphen.
        'a-.com',
        'ends with a dot.', '...', '. . .', '',
      ),
    );
  });

  it('treats exactly four segments of 0..255 as IPv4, a four-part version number too', () => {
    checkRows([
      ['1.2.3.4', `1${W}.${W}2${W}.${W}3${W}.${W}4`],
      ['version 1.2.3.4', `version ${n('1.2.3.4')}`],
      ['10.0.0.255', n('10.0.0.255')],
      ['0.0.0.0 255.255.255.255', `${n('0.0.0.0')} ${n('255.255.255.255')}`],
      // Leading zeros, up to three digits: browsers read them as an address.
      ['01.2.3.4', n('01.2.3.4')],
      ['010.000.001.099', n('010.000.001.099')],
      ...unchanged(
        '1.2.3.256', '1.2.3.4.5', '1.2.3', '256.1.1.1', '999.999.999.999', '0001.2.3.4', '1.2.3.-4',
        'v1.2.3.4', '1.2.3.4-beta', '١.٢.٣.٤',
      ),
    ]);
  });

  it('decides zones from the ICANN section only: foo.github.io is a domain under .io (trap 14)', () => {
    // With private domains allowed, tldts calls github.io a private suffix and
    // foo.github.io non-ICANN; in the ICANN section it is the domain github.io under io.
    const withPrivate = parse('foo.github.io', { allowPrivateDomains: true });
    expect([withPrivate.publicSuffix, withPrivate.isIcann, withPrivate.isPrivate]).to.deep.equal(['github.io', false, true]);
    const icann = parse('foo.github.io', { allowPrivateDomains: false });
    expect([icann.publicSuffix, icann.domain, icann.isIcann]).to.deep.equal(['io', 'github.io', true]);
    // tldts' isIp accepts impossible addresses; the module does not use it.
    expect(parse('999.999.999.999').isIp).to.equal(true);
    checkRows([
      ['foo.github.io', `foo${W}.${W}github${W}.${W}io`],
      ['foo.blogspot.com', n('foo.blogspot.com')],
      ['999.999.999.999', '999.999.999.999'],
    ]);
  });

  it('removes invisible and bidi-control characters next to a dot or @ first, then separates', () => {
    checkRows([
      ['example\u200B.com', n('example.com')],
      ['example.\u2060com', n('example.com')],
      ['user\u202E@example.com', `user@${n('example.com')}`],
      ['user@\u2066example.com', `user@${n('example.com')}`],
      ['example\u00AD.com', n('example.com')],
      ['example\uFEFF.\u200Dcom', n('example.com')],
      ['10\u200C.0.0.1', n('10.0.0.1')],
      ['evil\u2066\u2069.com', n('evil.com')],
      ['evil.\u061Ccom', n('evil.com')],
      ['evil\u200E\u200F.com', n('evil.com')],
      ['evil\u2064.com', n('evil.com')],
      ['evil\u202A\u202B\u202C\u202D.com', n('evil.com')],
      // Next to a dot that is no address: removed all the same.
      ['report\u200B.pdf', 'report.pdf'],
      // Elsewhere: kept.
      ['exa\u200Bmple.com', `exa\u200B${n('mple.com')}`],
      ['a\u200Bb \u202Ex\u202C', 'a\u200Bb \u202Ex\u202C'],
      // Other format characters are not on the list.
      ['evil\u180E.com', 'evil\u180E.com'],
      // Already separated text: the separators are removed and put back, the same.
      [n('example.com'), n('example.com')],
      // Removed before the https:// address is delimited: it runs on, as written.
      ['https://good.com\u200B.evil.com', `https://${n('good.com.evil.com')}`, 'https://good.com.evil.com'],
    ]);
  });

  it('separates Unicode (IDN) and punycode domains in known zones', () => {
    checkRows([
      ['bücher.de', `bücher${W}.${W}de`],
      ['BÜCHER.DE', n('BÜCHER.DE')],
      ['bu\u0308cher.de', n('bu\u0308cher.de')], // decomposed: judged in NFC, written as it came
      ['xn--bcher-kva.de', n('xn--bcher-kva.de')],
      ['пример.рф', n('пример.рф')],
      ['ПРИМЕР.РФ', n('ПРИМЕР.РФ')],
      ['example.xn--p1ai', n('example.xn--p1ai')],
      ['中国.cn', n('中国.cn')],
      ['例子.中国', n('例子.中国')],
      ['한국.kr', n('한국.kr')],
    ]);
  });

  it('finds the domain inside text written without spaces', () => {
    checkRows([
      ['请访问example.com了解', `请访问${n('example.com')}了解`],
      ['请访问example.com或者evil.com了解', `请访问${n('example.com')}或者${n('evil.com')}了解`],
      ['example.comにアクセス', `${n('example.com')}にアクセス`],
      ['example.com에서', `${n('example.com')}에서`],
      ['访问10.0.0.1了解', `访问${n('10.0.0.1')}了解`],
      ...unchanged('中.中.中', '请看report.pdf了解'),
    ]);
  });

  it('finds addresses inside Thai, Lao, Khmer and Myanmar text (written without spaces)', () => {
    checkRows([
      ['กรุณาไปที่example.comเพื่อดู', `กรุณาไปที่${n('example.com')}เพื่อดู`],
      ['ກະລຸນາໄປທີ່example.comເພື່ອ', `ກະລຸນາໄປທີ່${n('example.com')}ເພື່ອ`],
      ['សូមចូលទៅexample.comដើម្បី', `សូមចូលទៅ${n('example.com')}ដើម្បី`],
      ['ကျေးဇူးပြု၍example.comသို့', `ကျေးဇူးပြု၍${n('example.com')}သို့`],
    ]);
  });

  it('reads a decomposed mark at the end of a label as part of it, long hosts up to 255 characters, and a scheme glued to a domain', () => {
    /** A dotted name of exactly `length` characters under .com, in labels of at most 63. */
    const host = (length: number) => {
      const labels: string[] = [];
      for (let left = length - 4; left > 0; left -= 64) labels.push('a'.repeat(Math.min(63, left)));
      return `${labels.join('.')}.com`;
    };
    checkRows([
      ['cafe\u0301.com', n('cafe\u0301.com')],
      ['see cafe\u0301.com now', `see ${n('cafe\u0301.com')} now`],
      [`${'a'.repeat(36)}.com`, n(`${'a'.repeat(36)}.com`)],
      [host(255), n(host(255))],
      ...unchanged(host(256)),
      ['evil.httpbin.orghttps://x', `${n('evil.httpbin.org')}https://x`],
      ['evil.httpbin.org.http://x', `${n('evil.httpbin.org')}.http://x`],
      // Without `://` a trailing `http` is part of the name: `orghttp` is no zone.
      ...unchanged('mail.orghttp and mail.comhttps'),
    ]);
    expect(host(255)).to.have.length(255);
    expect(host(256)).to.have.length(256);
  });

  it('counts the ideographic, fullwidth and halfwidth ideographic full stops as dots, as URL parsers do', () => {
    for (const stop of ['\u3002', '\uFF0E', '\uFF61']) {
      // The reference: WHATWG URL reads the stop as a dot.
      expect(new URL(`https://evil${stop}com/`).host).to.equal('evil.com');
      const s = (address: string) => address.replaceAll(stop, `${W}${stop}${W}`);
      checkRows([
        [`evil${stop}com`, s(`evil${stop}com`)],
        [`visit www${stop}evil${stop}co${stop}uk today`, `visit ${s(`www${stop}evil${stop}co${stop}uk`)} today`],
        [`write to help@evil${stop}com`, `write to help@${s(`evil${stop}com`)}`],
        [`10${stop}0${stop}0${stop}1`, s(`10${stop}0${stop}0${stop}1`)],
        [`请访问evil${stop}com了解`, `请访问${s(`evil${stop}com`)}了解`],
        [`mixed evil${stop}example.com`, `mixed ${s(`evil${stop}example`).replaceAll('.', `${W}.${W}`)}${W}.${W}com`],
        [`evil\u200B${stop}com`, s(`evil${stop}com`)],
        ...unchanged(`report${stop}pdf`, `1${stop}2`, `host${stop}unknownzone`, `1${stop}2${stop}3${stop}256`),
      ]);
    }
    // A Chinese sentence's full stop between words is no address.
    checkRows(unchanged('我爱中国。中国很大', '谢谢。再见'));
  });

  it('isKnownZoneDomain: whole names under an ICANN public suffix, lower-cased NFC', () => {
    for (const host of [
      'example.com', 'EXAMPLE.COM', 'www.example.co.uk', 'readme.md', 'setup.py', 'archive.zip', 'foo.github.io',
      'bücher.de', 'BÜCHER.DE', 'bu\u0308cher.de', 'пример.рф', '例子.中国', 'xn--bcher-kva.de', '_dmarc.example.com',
    ]) {
      expect(isKnownZoneDomain(host), host).to.equal(true);
    }
    for (const host of [
      'report.pdf', 'notes.txt', 'a.b', '1.2', 'host.unknownzone', 'co.uk', 'a.ck', '1.2.3.4', '999.999.999.999',
      'example.test', 'evil.com/x', 'evil.com:80', 'example.com.', 'a b.com', '-evil.com', 'evil-.com',
      `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}com`, 'com', '',
    ]) {
      expect(isKnownZoneDomain(host), host).to.equal(false);
    }
  });

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

  it('gives the exact result for 2,000-character adversarial inputs (their speed is measured by npm run bench, operation 7)', () => {
    const unit = 'x.com 1.2.3.4 https://a.b/c.com http://e.com/f.g u@h.io v1.2 report.pdf setup.py a\u200B.b ';
    const unitTitle = `${n('x.com')} ${n('1.2.3.4')} https://a.b/${n('c.com')} http://${n('e.com')}/f.g u@${n('h.io')} v1.2 report.pdf ${n('setup.py')} a.b `;
    const unitBody = `${n('x.com')} ${n('1.2.3.4')} https://a.b/c.com http://${n('e.com')}/f.g u@${n('h.io')} v1.2 report.pdf ${n('setup.py')} a.b `;
    const times = Math.floor(2000 / unit.length);
    const pad = ' '.repeat(2000 - unit.length * times);
    const cases: [name: string, input: string, title: string, body?: string][] = [
      ["'a.'.repeat(1000)", 'a.'.repeat(1000), 'a.'.repeat(1000)],
      ["'1.'.repeat(1000)", '1.'.repeat(1000), '1.'.repeat(1000)],
      ["'a.com '.repeat(333)", 'a.com '.repeat(333), `a${W}.${W}com `.repeat(333)],
      ['mixed', unit.repeat(times) + pad, unitTitle.repeat(times) + pad, unitBody.repeat(times) + pad],
      ["'a.com'.repeat(400) (one 2,000-character run)", 'a.com'.repeat(400), 'a.com'.repeat(400)],
      ["'x.'.repeat(998) + 'com' (too long for a name)", `${'x.'.repeat(998)}com`, `${'x.'.repeat(998)}com`],
      ["'a'.repeat(1999) + '.'", `${'a'.repeat(1999)}.`, `${'a'.repeat(1999)}.`],
      ["'-'.repeat(1996) + '.com'", `${'-'.repeat(1996)}.com`, `${'-'.repeat(1996)}.com`],
      ["'h.'.repeat(1000)", 'h.'.repeat(1000), 'h.'.repeat(1000)],
      ["'https://'.repeat(250)", 'https://'.repeat(250), 'https://'.repeat(250)],
      ["'中.'.repeat(1000)", '中.'.repeat(1000), '中.'.repeat(1000)],
      ["'中a.com'.repeat(333)", '中a.com'.repeat(333), `中a${W}.${W}com`.repeat(333)],
      ["'\\u200B.'.repeat(1000)", '\u200B.'.repeat(1000), '.'.repeat(1000)],
      ["'\\u200B'.repeat(2000)", '\u200B'.repeat(2000), '\u200B'.repeat(2000)],
    ];
    // 250 different domains per text, and 8 such texts in turn: 2,000 names, more than the
    // memo keeps, so every call parses every name with tldts.
    const distinct = (k: number): string[] =>
      Array.from({ length: 250 }, (_, i) => `${String.fromCharCode(97 + k)}${i.toString(36).padStart(2, '0')}.com`);
    for (let k = 0; k < 8; k++) {
      cases.push([`250 distinct domains (text ${k + 1} of 8)`, `${distinct(k).join(' ')} `, `${distinct(k).map(n).join(' ')} `]);
    }
    for (const [name, input, title, body = title] of cases) {
      expect(input.length, name).to.be.within(1998, 2000);
      expect(neutralizeLinks(input, 'title'), `${name} title`).to.equal(title);
      expect(neutralizeLinks(input, 'body'), `${name} body`).to.equal(body);
    }
  });
});
