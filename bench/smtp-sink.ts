/**
 * A local SMTP server that accepts every letter and only counts it (no
 * parsing: the letter worker is what is measured, not the sink).
 */
import type { AddressInfo } from 'node:net';

import { SMTPServer } from 'smtp-server';

export interface CountingSink {
  port: number;
  /** Letters accepted (250 after DATA) so far. */
  readonly received: number;
  /** Resolves when `count` letters have arrived in all; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startCountingSink(): Promise<CountingSink> {
  let received = 0;
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 1024 * 1024,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received += 1;
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    get received() {
      return received;
    },
    waitFor(count, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`only ${received} of ${count} letters arrived in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
