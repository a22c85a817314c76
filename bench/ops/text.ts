/**
 * Operation 7: the text rules (`neutralizeLinks`) on 2,000 characters of mixed
 * adversarial text, calls per second, in this process (no HTTP).
 */
import { neutralizeLinks, type TextPlace } from '../../src/text/neutralize-links.ts';

/** Pieces a hostile or careless site writes: domains, IPs, links, addresses, invisible and bidi characters, long dotted runs. */
const PIECES = [
  'Visit shop.example.com today', 'or 192.168.0.1:8080/admin', 'https://a.example/b.com?x=1.2', 'http://evil.com/login.php',
  'mail me at user.name@sub.domain.co.uk', 'v1.2.3 and 1.2.3.4 and 1.2.3.256', 'report.pdf setup.py readme.md archive.zip',
  'exa\u200Bmple.com', 'ex\u00ADample\u200D.org', 'pay\u202Epal.com\u202C', '\u2066bank.example\u2069', 'www.xn--80ak6aa92e.com',
  'пример.рф', '例子.中国', 'a.b.c.d.e.f.g.h.i.j.com', 'x.'.repeat(20) + 'com', '1.'.repeat(12), 'h..t..t..p', '@@@...@@@',
  'host.unknownzone', 'co.uk.', '.com.', 'foo.github.io', 'localhost:3000', 'ftp://files.example.net/pub', 'e.g. i.e. etc.',
];

/** 2,000 characters (code units) of the pieces above, in a fixed order. */
export function adversarialText(length = 2000): string {
  let text = '';
  for (let i = 0; text.length < length; i++) text += `${PIECES[i % PIECES.length]!}${i % 7 === 6 ? '\n' : ' '}`;
  return text.slice(0, length);
}

/** 8 texts of 250 different domains each: used in turn, more names than the memo keeps. */
function distinctTexts(): string[] {
  return Array.from({ length: 8 }, (_, k) =>
    `${Array.from({ length: 250 }, (_, i) => `${String.fromCharCode(97 + k)}${i.toString(36).padStart(2, '0')}.com`).join(' ')} `);
}

export interface TextResult {
  name: string;
  where: TextPlace;
  callsPerSecond: number;
  usPerCall: number;
}

function time(texts: string[], where: TextPlace, seconds: number): { calls: number; seconds: number } {
  for (let i = 0; i < 200; i++) neutralizeLinks(texts[i % texts.length]!, where);
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < end) {
    for (let i = 0; i < 50; i++) neutralizeLinks(texts[calls++ % texts.length]!, where);
    now = process.hrtime.bigint();
  }
  return { calls, seconds: Number(now - start) / 1e9 };
}

export function benchText(seconds: number): TextResult[] {
  const cases: [string, string[]][] = [
    ['mixed adversarial, 2,000 chars', [adversarialText()]],
    ['250 distinct domains x 8 texts (no memo hits)', distinctTexts()],
  ];
  const out: TextResult[] = [];
  for (const [name, texts] of cases) {
    for (const where of ['title', 'body'] as const) {
      const r = time(texts, where, seconds);
      out.push({ name, where, callsPerSecond: r.calls / r.seconds, usPerCall: (r.seconds * 1e6) / r.calls });
    }
  }
  return out;
}
