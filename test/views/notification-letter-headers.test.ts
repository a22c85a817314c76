/** The notification letter's headers, and the same headers after nodemailer sent them and mailparser read them. */
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';

import { notificationLetter } from '../../views/letters/notification.ts';
import { HOSTILE } from '../helpers/html.ts';
import { base } from '../helpers/notification-letter.ts';

/** Decodes RFC 2047 B-encoded words (what a mail client shows). */
function decodeWords(value: string): string {
  return value.replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=\s*/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
}

describe('notificationLetter', () => {
  describe('headers', () => {
    it('have Auto-Submitted (RFC 3834), Content-Language, List-Unsubscribe, One-Click and List-Id (RFC 8058, RFC 2919)', () => {
      expect(notificationLetter(base).headers).to.deep.equal({
        'Auto-Submitted': 'auto-generated',
        'Content-Language': 'en',
        'List-Unsubscribe': '<https://id.example/unsubscribe/tok.sig>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'List-Id': 'Shop <shop.notify.id.example>',
      });
    });

    it('name the reader\'s language in Content-Language', () => {
      expect(notificationLetter({ ...base, locale: 'ar' }).headers['Content-Language']).to.equal('ar');
    });

    it('make the List-Id a lower-case dot-atom, the phrase plain atoms without quotes or backslashes', () => {
      const letter = notificationLetter({ ...base, siteName: 'Shop "Best" \\ Co\r\nX', clientId: 'My_Client.ID/1', issuerHost: 'ID.Example:3000' });
      expect(letter.headers['List-Id']).to.equal('Shop Best Co X <my-client-id-1.notify.id.example>');
      expect(notificationLetter({ ...base, siteName: "Bob's Shop & Co" }).headers['List-Id']).to.equal("Bob's Shop & Co <shop.notify.id.example>");
      const dev = notificationLetter({ ...base, siteName: '""', issuerHost: 'localhost:3000' });
      expect(dev.headers['List-Id']).to.equal('<shop.notify.localhost>');
    });

    it('encode any other site name as RFC 2047 words, so the header stays ASCII and unquoted', () => {
      for (const siteName of ['Café Zürich', 'متجر الكتب', 'Ünïcødé '.repeat(20).trim(), 'Books Ltd.', 'a=?b', 'x <y@z> (c)']) {
        const id = notificationLetter({ ...base, siteName }).headers['List-Id'] ?? '';
        expect(id).to.match(/^=\?UTF-8\?B\?[^"\\]+ <shop\.notify\.id\.example>$/);
        for (const word of id.split(' ').slice(0, -1)) expect(word.length).to.be.at.most(75);
        expect(decodeWords(id.replace(/ <[^>]*>$/, ''))).to.equal([...siteName].slice(0, 100).join('').trim());
      }
    });

    it('stay on one line and ASCII whatever the inputs contain', () => {
      const letter = notificationLetter({
        ...base,
        siteName: `${HOSTILE}\r\nBcc: x@y.example`,
        clientId: 'a\r\nb',
        issuerHost: 'id.example\r\nX: y',
        unsubscribeUrl: 'https://id.example/unsubscribe/a"b<c>d e\r\nX-Evil: 1',
      });
      for (const value of Object.values(letter.headers)) expect(value).to.match(/^[\x20-\x7e]+$/);
      expect(letter.headers['List-Unsubscribe']).to.equal('<https://id.example/unsubscribe/a%22b%3Cc%3Ed%20eX-Evil:%201>');
    });
  });

  describe('through nodemailer and mailparser', () => {
    // nodemailer encodes a whole custom header value that holds a '"' or non-ASCII
    // text; these headers must go out exactly as the letter made them.
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

    for (const siteName of ['Shop', "Bob's Shop & Co", 'Shop "Best" \\ Co', 'Café Zürich', 'متجر الكتب', 'Books Ltd.', HOSTILE]) {
      it(`keep List-Id, List-Unsubscribe and the From name intact (${siteName})`, async () => {
        const letter = notificationLetter({ ...base, locale: 'de', siteName, clientId: 'n-site', issuerHost: '127.0.0.1:4567' });
        const info = await transport.sendMail({
          from: { name: letter.fromName, address: 'no-reply@id.example' },
          to: 'ann@example.com',
          subject: letter.subject,
          text: letter.text,
          html: letter.html,
          headers: letter.headers,
        });
        const raw = (info.message as Buffer).toString('utf8');
        const head = `\n${raw.slice(0, raw.indexOf('\n\n')).replace(/\n[ \t]+/g, ' ')}\n`; // unfolded, one header a line
        expect(head).to.include(`\nList-ID: ${letter.headers['List-Id']}\n`);
        expect(head).to.include(`\nList-Unsubscribe: <${base.unsubscribeUrl}>\n`);
        expect(head).to.include('\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\n');
        const parsed = await simpleParser(raw);
        expect(parsed.from?.value[0]?.name).to.equal(letter.fromName);
        expect(parsed.subject).to.equal(letter.subject);
        const list = parsed.headers.get('list') as { id?: { id?: string }; unsubscribe?: { url?: string } };
        expect(list.id?.id).to.equal('n-site.notify.127.0.0.1');
        expect(list.unsubscribe?.url).to.equal(base.unsubscribeUrl);
      });
    }
  });
});
