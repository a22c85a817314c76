/**
 * The service's letters as they leave it: rendered by the views and composed
 * by nodemailer exactly as the mailer sends them (a stream transport stands
 * in for SMTP and hands back the raw message).
 */
import nodemailer from 'nodemailer';

import type { Locale } from '../../src/i18n/index.ts';
import { createMailer } from '../../src/mail/mailer.ts';
import { loginCodeLetter } from '../../examples/reference/views/letters/login-code.ts';
import { notificationLetter, type Category } from '../../views/letters/notification.ts';
import { theftLetter } from '../../views/letters/theft.ts';

const FROM = 'Example ID <no-reply@id.example>';

async function compose(letter: { to: string; subject: string; text: string; html: string; headers: Record<string, string>; fromName?: string }): Promise<string> {
  let raw = '';
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const capture = {
    async sendMail(message: Parameters<typeof transport.sendMail>[0]) {
      const info = await transport.sendMail({ ...message, messageId: '<letter-1@id.example>', date: new Date('2026-11-20T10:00:00Z') });
      raw = (info.message as Buffer).toString('utf8');
      return info;
    },
  };
  const mailer = createMailer({ transport: capture, from: FROM });
  await mailer.send(letter);
  return raw;
}

/** A notification letter of a site, as the letter worker sends it. */
export function notificationMessage(locale: Locale, category: Category): Promise<string> {
  const letter = notificationLetter({
    locale, serviceName: 'Example ID', siteName: 'Northwind Shop', siteHost: 'shop.example', clientId: 'northwind-shop',
    issuerHost: 'id.example', category,
    title: 'Your order 1042 has shipped',
    body: 'Hello Ann,\n\nyour order 1042 (two notebooks, one pen) left our warehouse today and should arrive on Tuesday.\n\nThank you for shopping with us.',
    url: 'https://shop.example/orders/1042',
    unsubscribeUrl: 'https://id.example/unsubscribe/eyJhIjoiYWNjIn0.c2lnbmF0dXJl',
    consoleUrl: 'https://id.example/console',
  });
  return compose({ to: 'ann@example.com', fromName: letter.fromName, subject: letter.subject, text: letter.text, html: letter.html, headers: { ...letter.headers, 'X-Notification-Id': 'n-1042' } });
}

/** A sign-in code letter. */
export function codeMessage(locale: Locale): Promise<string> {
  const letter = loginCodeLetter({ locale, code: '493027', serviceName: 'Example ID', clientName: 'Northwind Shop' });
  return compose({ to: 'ann@example.com', ...letter });
}

/** The service's notice that a sign-in was used twice (theft). */
export function theftMessage(locale: Locale): Promise<string> {
  const letter = theftLetter({ locale, serviceName: 'Example ID', siteName: 'Northwind Shop', at: Date.UTC(2026, 10, 20, 9, 58), sessionsUrl: 'https://id.example/console/sessions' });
  return compose({ to: 'ann@example.com', ...letter });
}
