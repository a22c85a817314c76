import { generate } from 'selfsigned';
import { Agent } from 'undici';

/** The connection pool Node's fetch takes (`dispatcher`), as its types name it. */
export type Dispatcher = NonNullable<RequestInit['dispatcher']>;

export interface ThrowawayTls {
  /** PEM private key and certificate for 127.0.0.1 and localhost, made for this run only. */
  key: string;
  cert: string;
  /** A connection pool that trusts this certificate (and nothing else): for the test's own requests. */
  dispatcher: Dispatcher;
  /** Node's fetch through that pool. */
  fetch: typeof globalThis.fetch;
  close(): Promise<void>;
}

/**
 * A self-signed certificate made at test time, trusted only by the requests
 * the test sends through `dispatcher`/`fetch`: verification stays on for
 * everything else in the process (no NODE_TLS_REJECT_UNAUTHORIZED).
 */
export async function throwawayTls(): Promise<ThrowawayTls> {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 24 * 60 * 60_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  });
  // undici's Agent and the Dispatcher Node's fetch types name are one API in two declarations.
  const dispatcher = new Agent({ connect: { ca: pems.cert } }) as unknown as Dispatcher;
  const fetch = ((input: string | URL | Request, init: RequestInit = {}) =>
    globalThis.fetch(input, { ...init, dispatcher })) as typeof globalThis.fetch;
  return { key: pems.private, cert: pems.cert, dispatcher, fetch, close: () => dispatcher.close() };
}
