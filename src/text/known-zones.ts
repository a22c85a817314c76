/**
 * Which addresses get the separator (SPEC "Rules for the text of messages",
 * rules 4 to 6): a whole IPv4 address (four segments of 0 to 255), or a whole
 * domain in a known zone (the ICANN section of the Public Suffix List, as
 * shipped in tldts: a finite list). Used by ./neutralize-links.ts.
 */
import { parse } from 'tldts';

import { BoundedMemo } from './bounded-memo.ts';

// The stops other than FULL STOP that URL parsers read as one (IDEOGRAPHIC, FULLWIDTH, HALFWIDTH IDEOGRAPHIC).
const OTHER_DOTS = /[\u3002\uFF0E\uFF61]/g;

// Exactly four segments of one to three ASCII digits, each 0..255 (rule 6).
// Leading zeros are accepted (`01.2.3.4`, `010.0.0.1`): browsers still read
// them as an address (WHATWG parses `010` as octal 8), so they must not link.
// Not tldts' `isIp`, which accepts `999.999.999.999`.
const IPV4 = /^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])$/;

// ICANN section only: with private domains allowed, tldts reports
// `foo.github.io` as a non-ICANN (private) suffix. Hostname extraction and
// validation stay on (the defaults): `extractHostname: false` would turn the
// validation off, and the `hostname === token` check below relies on it.
const TLDTS_OPTIONS = {
  allowIcannDomains: true,
  allowPrivateDomains: false,
  detectIp: true,
  extractHostname: true,
  validateHostname: true,
} as const;

// The longest name tldts accepts; longer tokens stay out of the memo (they are never names).
const MAX_HOST_LENGTH = 255;

// Stryker disable next-line Regex: NFC leaves ASCII as it is, and a host without any ASCII character has no '.' (false either way)
const NON_ASCII = /[^\0-\x7F]/;

/**
 * Whether `host` is a whole domain name under a public suffix in the ICANN
 * section of the Public Suffix List, as shipped in tldts: the SPEC's "finite
 * list of known zones" (rule 5). Decided on the lower-cased NFC form (tldts
 * lower-cases ASCII only), and only if tldts' validated hostname is that form
 * exactly (no partial match: `evil.com/x` or `a b.com` are not hosts), it is
 * not an IP address, and it has a registrable domain: `co.uk` alone, or
 * `a.ck` under the `*.ck` wildcard, do not count.
 *
 * Real zones that are also file extensions count: `readme.md` (Moldova),
 * `setup.py` (Paraguay), `main.rs` (Serbia), `run.sh`, `archive.zip`,
 * `clip.mov` are domains someone can register, so they are separated. Names
 * whose last label is no ICANN zone stay plain: `report.pdf`, `notes.txt`,
 * `1.2`, `a.b`, `host.unknownzone`, `printer.local`, `example.test`.
 * Unicode names count (`bücher.de`, `пример.рф`, `例子.中国`), as do
 * punycode ones.
 */
export function isKnownZoneDomain(host: string): boolean {
  const key = (NON_ASCII.test(host) ? host.normalize('NFC') : host).toLowerCase();
  // tldts refuses a name over 255 characters, and one without a dot has no registrable domain.
  const parsed = parse(key, TLDTS_OPTIONS);
  return parsed.hostname === key && parsed.isIp !== true && parsed.isIcann === true && parsed.domain !== null;
}

// At most 1,000 tokens of at most 255 characters, as written (the case and
// normal form are the tldts check's business). Texts repeat the same few
// addresses (`a.com ` 333 times in a 2,000-character body), and a lookup
// costs a fraction of the checks.
const addressMemo = new BoundedMemo<boolean>(1000);

/** Whether a dotted token is an IPv4 address or a domain in a known zone: the addresses that get the separator. */
export function isAddress(token: string): boolean {
  const known = addressMemo.get(token);
  if (known !== undefined) return known;
  // Judged as a URL parser reads it: every kind of stop is a dot.
  const host = token.replace(OTHER_DOTS, '.');
  const answer = IPV4.test(host) || isKnownZoneDomain(host);
  if (token.length <= MAX_HOST_LENGTH) addressMemo.set(token, answer);
  return answer;
}
