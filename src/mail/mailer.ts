import nodemailer from 'nodemailer';

import type { MailTransport } from '../host.ts';
import { encodedWords, literalDisplayName } from '../text/encoded-words.ts';

export interface Letter {
  to: string;
  /** As the reader sees it; always sent as encoded-words, so a site's text decodes once, to itself. */
  subject: string;
  text: string;
  html?: string;
  headers?: Record<string, string>;
  /** Display name for this letter; the address stays the configured From address. */
  fromName?: string;
}

export interface Mailer {
  /** True when letters only go to the log (no SMTP configured). */
  readonly development: boolean;
  send(letter: Letter): Promise<void>;
  close(): Promise<void>;
}

/**
 * SMTP through nodemailer, or, with neither a transport nor an SMTP URL, a
 * development outbox that prints each letter's text to the log.
 */
/** Where letters go (the plugin's `mail` option, validated). */
export interface MailSettings {
  transport?: MailTransport | undefined;
  smtpUrl?: string | undefined;
  from: string;
  outbox?: 'log' | undefined;
}

export function createMailer(mail: MailSettings): Mailer {
  // The plugin closes only the transport it made from smtpUrl; the host's stays open.
  const ownTransport = !mail.transport && mail.smtpUrl ? nodemailer.createTransport(mail.smtpUrl) : undefined;
  const transport: MailTransport | undefined = mail.transport ?? ownTransport;

  if (!transport) {
    return {
      development: true,
      async send(letter) {
        // Development outbox: letters go to the log so a newcomer can sign in
        // without a mail server. Never used when SMTP is configured.
        const from = letter.fromName ? `From: ${letter.fromName}\n` : '';
        console.log(`\n----- letter (development outbox) -----\n${from}To: ${letter.to}\nSubject: ${letter.subject}\n\n${letter.text}\n----- end of letter -----\n`);
      },
      async close() {},
    };
  }

  const sender = transport;
  // The address part of `from` ("Name <a@b>" or "a@b"), for letters sent under another display name.
  const fromAddress = /<([^<>]+)>\s*$/.exec(mail.from)?.[1] ?? mail.from.trim();
  return {
    development: false,
    async send(letter) {
      const { fromName, subject, ...rest } = letter;
      await sender.sendMail({
        ...rest,
        subject: encodedWords(subject, 'Q'),
        from: fromName ? { name: literalDisplayName(fromName), address: fromAddress } : mail.from,
      });
    },
    async close() {
      ownTransport?.close();
    },
  };
}
