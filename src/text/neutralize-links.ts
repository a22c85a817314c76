/**
 * Keeps addresses in a site's notification text from becoming links in the
 * reader's mail client (SPEC "Send a notification", "Rules for the text of
 * messages", rules 1 to 7; issue 4, "Text rules").
 *
 * Only the `url` field of a notification becomes a link, and the letter does
 * that itself (rule 1); the title and body are HTML-escaped by the letter, so
 * this module works on plain text and never produces markup. Everywhere in the
 * title and body, Gmail, Outlook and Apple Mail would turn `evil.example.com`,
 * `user@evil.example.com` or `10.0.0.1` into a link on their own; an invisible
 * separator around each dot of the address stops them, and the reader still
 * sees exactly what the site wrote. In comments, `<WJ>` stands for that
 * separator.
 */
import { isAddress, isKnownZoneDomain } from './known-zones.ts';

export { isKnownZoneDomain };

/**
 * The invisible separator: U+2060 WORD JOINER, placed on both sides of every
 * dot of a neutralized address (`example<WJ>.<WJ>com`).
 *
 * Why WORD JOINER and not U+200B ZERO WIDTH SPACE:
 * - Linkifiers: a word joiner next to each dot, with no scheme, is the
 *   published recipe that stopped auto-linking in a cross-client test (Gmail,
 *   Outlook, Apple Mail and others; Samsung Mail was the one exception: S.
 *   Whiteman, "Stop email clients from hyperlinking text that's merely
 *   URL-like", blog.teknkl.com). Zero-width spaces have a mixed record: Gmail
 *   was seen to read through them when detecting phone numbers. (Not
 *   re-tested here.) One on each side means neither `example.` nor `.com` is
 *   left glued to a label.
 * - Rendering: U+200B is a line-break opportunity, so a narrow window may wrap
 *   `evil.example` / `.com` at the separator; U+2060 forbids a break there,
 *   so the text lays out exactly as written.
 * - Copy/paste: both are default-ignorable and UTS #46 (IDNA) maps both to
 *   nothing, so a host pasted into an address bar resolves to the name the
 *   reader saw (checked with WHATWG `new URL`). The harm is the same for both:
 *   a text search for the pasted string misses. U+200C ZERO WIDTH NON-JOINER,
 *   by contrast, makes the URL parser reject the host.
 */
export const LINK_SEPARATOR = '\u2060';

/**
 * Where a text is shown: the rules differ only for an address beginning with
 * `https://`, which arrives exactly as written in the body (SPEC rule 2) and
 * is separated like any other in the title.
 */
export type TextPlace = 'title' | 'body';

// Invisible and bidi-control characters a sender could put next to a dot or
// an `@` to hide an address from the scan below while the mail client reads
// through them (`example\u200B.com`, `user\u202E@example.com`): SOFT HYPHEN
// U+00AD, ARABIC LETTER MARK U+061C, ZWSP/ZWNJ/ZWJ U+200B..U+200D, LRM/RLM
// U+200E..U+200F, the embeddings and overrides U+202A..U+202E, WORD JOINER and
// the invisible operators U+2060..U+2064, the isolates U+2066..U+2069 and
// ZWNBSP/BOM U+FEFF. WORD JOINER is our own separator: removing it first is
// what makes a second call a no-op.
const SMUGGLING = String.raw`[\u00AD\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]`;

// What separates labels: FULL STOP, and the three stops that URL parsers
// (UTS #46 mapping in the WHATWG host parser) read as one: IDEOGRAPHIC FULL
// STOP U+3002, FULLWIDTH FULL STOP U+FF0E and HALFWIDTH IDEOGRAPHIC FULL STOP
// U+FF61. `evil。com` opens evil.com: it is a domain like `evil.com`. (For
// character classes.)
const DOTS = String.raw`.\u3002\uFF0E\uFF61`;
const DOT = `[${DOTS}]`;
const HAS_DOT = new RegExp(DOT);

// A whole run of those characters touching a `.` or `@` on either side. The
// lookbehind lets the first alternative start only at the beginning of a run,
// so each run is read a bounded number of times (no quadratic rescans of a
// long run that touches nothing).
const SMUGGLED = new RegExp(`(?<!${SMUGGLING})${SMUGGLING}+(?=[${DOTS}@])|(?<=[${DOTS}@])${SMUGGLING}+`, 'gu');
// Stryker disable next-line StringLiteral: the class holds only \uXXXX escapes of the BMP, read alike with and without the u flag
const ANY_SMUGGLING = new RegExp(SMUGGLING, 'u');

// One character of a domain label: letters, marks and digits of any script
// (IDN labels such as `bücher.de`, `пример.рф`, `例子.中国`, punycode
// `xn--...`), hyphen and underscore.
const LABEL = String.raw`[\p{L}\p{M}\p{N}_\-]`;

// The scripts written without spaces between words. In `请访问example.com了解`
// or `example.comにアクセス` the domain a reader and a mail client see is
// `example.com`: when a run containing them is not an address as a whole, its
// pieces without them are judged (see `neutralizeLinks`).
const SPACELESS = String.raw`[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]`;
const SPACED_LABEL = String.raw`[${LABEL}--${SPACELESS}]`;
const HAS_SPACELESS = new RegExp(SPACELESS, 'v');

// A maximal dotted run of labels without the spaceless scripts. It never
// fails after its first label character and ends where no label follows, so
// a global scan starts each match where a piece starts and reads each
// character once.
const SPACED_RUN = new RegExp(String.raw`${SPACED_LABEL}+(?:${DOT}${SPACED_LABEL}+)*`, 'gv');

// What may follow `https://` in an address as written: the ASCII characters
// RFC 3986 allows in a URL (all printable ASCII but space and
// " < > \ ^ ` { | }), and non-ASCII letters, marks and digits (IRIs,
// `https://bücher.de/straße`). White space, control and format characters
// and non-ASCII punctuation end it: `https://example.com，或者evil.com` is an
// address and a sentence, as a reader (and a linkifier) sees it.
const URL_CHAR = String.raw`[\x21\x23-\x3B\x3D\x3F-\x5B\x5D\x5F\x61-\x7A\x7E\p{L}\p{M}\p{N}]`;

// `https://` in any case, starting a word: not glued to a label or a dot
// (`xhttps://`, `evil.com.https://` are not addresses that begin with
// https://; their hosts are separated like any other). The spaceless scripts
// do not glue (`请访问https://...` begins with https://). Explicit letters
// rather than the `i` flag: with Unicode case folding, `httpſ` (long s) would
// count as `https`.
const HTTPS_ADDRESS = String.raw`(?<![${SPACED_LABEL}${DOTS}])[hH][tT][tT][pP][sS]:\/\/${URL_CHAR}*`;

// The first dot of a dotted run of labels: group 1 is the label before it
// (read by the lookbehind, maximal because `+` is greedy, so the run starts at
// a label boundary), group 2 the rest of the run, maximal too.
const DOTTED_RUN = String.raw`${DOT}(?<=(${LABEL}+)${DOT})(${LABEL}+(?:${DOT}${LABEL}+)*)`;

// One global scan per text. A match starts at a literal `.` (or, in the body,
// an `h`/`H` that is not glued to a word), so plain text is skipped quickly
// and nothing runs per word. Linear by construction: every quantifier is
// greedy over one character class and is followed either by nothing that can
// fail or by a literal that is not in the class, so nothing backtracks; there
// are no nested or overlapping quantifiers. Each character is read a bounded
// number of times: by the forward scan, by the lookbehind of the one dot that
// follows its label, by at most one match, since a run is consumed whole from
// its first dot, and by at most one SPACED_RUN scan of that run.
// (`v` flag: class subtraction in SPACED_LABEL.)
const SCAN: Readonly<Record<TextPlace, RegExp>> = {
  // SPEC rule 2: in the body, an address beginning with https:// is skipped, byte for byte.
  body: new RegExp(`${HTTPS_ADDRESS}|${DOTTED_RUN}`, 'gv'),
  title: new RegExp(DOTTED_RUN, 'gv'),
};

// The end of a run that is glued to `://` (`evil.comhttps://x`,
// `evil.com.http://x`): a scheme, with the dot before it, not part of the
// run's address.
const GLUED_SCHEME = new RegExp(`${DOT}?[hH][tT][tT][pP][sS]?$`);

/** A label separator (see DOTS). */
function isDot(code: number): boolean {
  return code === 0x2e || code === 0x3002 || code === 0xff0e || code === 0xff61;
}

/** `-`, `_` or a dot at the edge of a run: punctuation around an address (`--example.com--`, `_example.com_`), not part of it. */
function isEdge(code: number): boolean {
  return code === 0x2d || code === 0x5f || isDot(code);
}

/**
 * Returns `text` with {@link LINK_SEPARATOR} (U+2060 WORD JOINER) on both
 * sides of every dot of each domain or IPv4 address in it, so that mail
 * clients do not turn it into a link (SPEC "Rules for the text of messages";
 * issue 4, "Text rules"). `where` says whether `text` is a notification's
 * title or its body; anything but `'body'` is treated as a title.
 *
 * 1. Smuggling characters first: every run of the invisible and bidi-control
 *    characters soft hyphen U+00AD, ALM U+061C, ZWSP/ZWNJ/ZWJ/LRM/RLM
 *    U+200B..U+200F, the bidi embeddings and overrides U+202A..U+202E, WORD
 *    JOINER and the invisible operators U+2060..U+2064, the bidi isolates
 *    U+2066..U+2069 and U+FEFF, that touches a `.` or an `@` is removed, so
 *    `example\u200B.com` or `user\u202E@example.com` cannot slip past the
 *    scan. Such characters elsewhere stay.
 * 2. Body only: an address beginning with `https://` (any case, at the start
 *    of a word) arrives exactly as written, up to the first character that
 *    cannot be part of it: white space, a control or format character,
 *    `" < > \ ^ \` { | }`, or non-ASCII punctuation or symbols such as `，`,
 *    `。`, `«` (non-ASCII letters and digits go on). In the title it is
 *    separated like any other text (it must not become a link there either).
 *    `http://` addresses are separated in both.
 * 3. Every maximal dotted run of labels (letters, marks, digits, `-`, `_`),
 *    without the `-`, `_` and `.` at its edges, is judged whole: it is
 *    separated if it is an IPv4 address (four segments of 0..255, one to three
 *    ASCII digits each: `1.2.3.4`, a four-part version number too; not
 *    `1.2.3.256`, `1.2.3.4.5`) or a domain in a known zone
 *    ({@link isKnownZoneDomain}: the ICANN section of the Public Suffix List
 *    in tldts). The ideographic, fullwidth and halfwidth ideographic full
 *    stops (U+3002, U+FF0E, U+FF61) count as dots, since URL parsers read
 *    them as one: `evil。com` is separated like `evil.com`, its stop kept. Bare, after `http://` or another scheme, in an e-mail address,
 *    before a port or a path, the run is the same
 *    (`user@mail<WJ>.<WJ>example<WJ>.<WJ>com`,
 *    `http://evil<WJ>.<WJ>example<WJ>.<WJ>com/path`,
 *    `example<WJ>.<WJ>com:8080`). A final sentence dot is not part of a run,
 *    nor is a scheme glued to its end (`evil.comhttps://x`). A run that is
 *    not an address and contains Chinese, Japanese, Korean, Thai, Lao, Khmer
 *    or Myanmar letters, which are written without spaces, is judged again
 *    in its pieces without them: `请访问example.com了解` separates
 *    `example.com`, and `例子.中国` is separated whole.
 * 4. Nothing else changes: removing the inserted separators gives back the
 *    text of step 1, and a second call changes nothing (step 1 removes the
 *    separators next to dots, step 3 puts the same ones back).
 *
 * One pass of a precompiled, linear-time regular expression, and at most a
 * few tldts parses per dotted run (memoised, boundedly); strings are only
 * built around the addresses that change.
 */
export function neutralizeLinks(text: string, where: TextPlace): string {
  const clean = ANY_SMUGGLING.test(text) ? text.replace(SMUGGLED, '') : text;
  let out = '';
  let copied = 0; // clean[0, copied) is already in `out`

  /** Judges `clean[from, to)` without the punctuation at its edges; separates its dots if it is an address. */
  const separate = (from: number, to: number): boolean => {
    while (from < to && isEdge(clean.charCodeAt(from))) from++;
    while (to > from && isEdge(clean.charCodeAt(to - 1))) to--;
    if (!isAddress(clean.slice(from, to))) return false;
    // On both sides of *every* dot, not only the zone's: any dotted remainder
    // would still be linked (`bank.co` in `bank.co.uk`, `www.evil` in
    // `www.evil.com`).
    for (let i = from; i < to; i++) {
      if (!isDot(clean.charCodeAt(i))) continue;
      out += `${clean.slice(copied, i)}${LINK_SEPARATOR}${clean[i]}${LINK_SEPARATOR}`;
      copied = i + 1;
    }
    return true;
  };

  const scan = where === 'body' ? SCAN.body : SCAN.title;
  scan.lastIndex = 0;
  for (let m = scan.exec(clean); m !== null; m = scan.exec(clean)) {
    const [, first, rest] = m;
    if (first === undefined) continue; // an https:// address in the body: as written (groups 1 and 2 are set together)
    const from = m.index - first.length;
    let to = scan.lastIndex;
    const glued = clean.startsWith('://', to) ? GLUED_SCHEME.exec(rest!) : null;
    if (glued !== null) {
      // `evil.com.https://x`: judge `evil.com` and scan again from the scheme.
      // Scanning again from the end of `evil.com` reads the scheme's dot as a
      // run of one label (`com.https`), which is never an address.
      to -= glued[0].length;
      scan.lastIndex = to;
    }
    if (separate(from, to)) continue;
    const run = clean.slice(from, to);
    if (!HAS_SPACELESS.test(run)) continue;
    SPACED_RUN.lastIndex = 0;
    for (let piece = SPACED_RUN.exec(run); piece !== null; piece = SPACED_RUN.exec(run)) {
      if (HAS_DOT.test(piece[0])) separate(from + piece.index, from + SPACED_RUN.lastIndex);
    }
  }
  return copied === 0 ? clean : out + clean.slice(copied);
}
