import type { AddressInfo } from 'node:net';

import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSinkOptions {
  /** Listen on this port (to restart a sink where the service expects it); default a free one. */
  port?: number;
  /** Recipients refused at RCPT TO with this reply code (e.g. 550 for good, 451 for now). */
  refuse?: Map<string, number>;
  /** Wait this long before answering 250 to each letter. */
  delayMs?: number;
}

export interface SmtpSink {
  url: string;
  port: number;
  letters: ParsedMail[];
  /** Recipients tried at RCPT TO (refused ones included), in order. */
  attempts: string[];
  /** Letters whose sender went away before the final 250 (a transfer cut off mid-way). */
  readonly abandoned: number;
  /** Letters received in full and waiting for their final 250 (`delayMs`): a sender has them in hand. */
  readonly inTransfer: number;
  /** Resolves with the first letter (already received or still to come) that matches. */
  waitFor(match: (letter: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 that parses and keeps every letter. A
 * letter counts as delivered only when the sender is still there for the
 * final 250, as with a real mail server.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const letters: ParsedMail[] = [];
  const attempts: string[] = [];
  const waiters = new Set<() => void>();
  const closed = new Set<string>();
  let abandoned = 0;
  let inTransfer = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      attempts.push(address.address);
      const code = options.refuse?.get(address.address);
      if (code) {
        callback(Object.assign(new Error(code >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: code }));
        return;
      }
      callback();
    },
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(async (letter) => {
        inTransfer += 1;
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        inTransfer -= 1;
        if (closed.has(session.id)) {
          abandoned += 1;
          callback(new Error('sender went away'));
          return;
        }
        letters.push(letter);
        for (const wake of waiters) wake();
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    letters,
    attempts,
    get abandoned() { return abandoned; },
    get inTransfer() { return inTransfer; },
    waitFor(match, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = letters.find(match);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error('no matching letter arrived'));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
