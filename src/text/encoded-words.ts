/**
 * Header text the service writes itself, so that a mail client decodes it
 * exactly once (RFC 2047). nodemailer leaves a valid encoded-word in a header
 * as it is (KNOWN-TRAPS 25): a site's title `=?UTF-8?B?...?=` would reach the
 * reader as whatever it encodes, past every text rule. Text that was encoded
 * here decodes to the text as written, encoded-words in it included.
 */

// RFC 2047 section 5 (3): the characters a Q-encoded word may carry as they are, in any header.
const Q_PLAIN = /^[A-Za-z0-9!*+\-/]$/;

/** One character's UTF-8 bytes in the Q encoding: `_` for a space, `=XX` for anything not plain. */
function qEncoded(ch: string): string {
  if (ch === ' ') return '_';
  if (Q_PLAIN.test(ch)) return ch;
  return [...Buffer.from(ch, 'utf8')].map((byte) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

const ENCODINGS = {
  // 45 bytes -> 60 base64 characters, 72 with the frame.
  B: { room: 45, size: (ch: string) => Buffer.byteLength(ch, 'utf8'), encode: (chunk: string) => Buffer.from(chunk, 'utf8').toString('base64') },
  // 63 characters of encoded text, 75 with the frame.
  Q: { room: 63, size: (ch: string) => qEncoded(ch).length, encode: (chunk: string) => [...chunk].map(qEncoded).join('') },
} as const;

/**
 * `text` as RFC 2047 encoded-words (UTF-8), each at most 75 characters, split
 * between code points and joined by spaces (which a decoder drops between two
 * encoded-words). Pure ASCII, so nodemailer passes it unchanged. The Q
 * encoding for a Subject: SpamAssassin counts a base64 Subject against some
 * rules (`__SUBJECT_ENCODED_B64`), and Q keeps ASCII readable.
 */
export function encodedWords(text: string, encoding: keyof typeof ENCODINGS): string {
  const { room, size, encode } = ENCODINGS[encoding];
  const words: string[] = [];
  let chunk = '';
  let used = 0;
  for (const ch of text) {
    const needs = size(ch);
    if (chunk !== '' && used + needs > room) {
      words.push(chunk);
      chunk = '';
      used = 0;
    }
    chunk += ch;
    used += needs;
  }
  if (chunk !== '') words.push(chunk);
  return words.map((w) => `=?UTF-8?${encoding}?${encode(w)}?=`).join(' ');
}

/**
 * A display name for an address object of nodemailer. nodemailer encodes a
 * name with non-ASCII text whole, and puts a printable ASCII one in quotes as
 * it is, where mail clients still decode an encoded-word
 * (`"=?UTF-8?B?...?="`). A WORD JOINER (U+2060, invisible, as in the text
 * rules) after each `=` of a `=?` makes such a name non-ASCII, so it is
 * encoded and reads as written.
 */
export function literalDisplayName(name: string): string {
  return name.replaceAll('=?', '=\u2060?');
}
