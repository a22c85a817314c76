import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';

import type { ResolvedOptions } from '../options.ts';

export interface Letter {
  to: string;
  subject: string;
  text: string;
  html?: string;
  headers?: Record<string, string>;
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
export function createMailer(mail: ResolvedOptions['mail']): Mailer {
  let transport: Transporter | undefined = mail.transport;
  const owned = !transport && !!mail.smtpUrl;
  if (!transport && mail.smtpUrl) transport = nodemailer.createTransport(mail.smtpUrl);

  if (!transport) {
    return {
      development: true,
      async send(letter) {
        // Development outbox: letters go to the log so a newcomer can sign in
        // without a mail server. Never used when SMTP is configured.
        console.log(`\n----- letter (development outbox) -----\nTo: ${letter.to}\nSubject: ${letter.subject}\n\n${letter.text}\n----- end of letter -----\n`);
      },
      async close() {},
    };
  }

  const sender = transport;
  return {
    development: false,
    async send(letter) {
      await sender.sendMail({ from: mail.from, ...letter });
    },
    async close() {
      if (owned) sender.close();
    },
  };
}
