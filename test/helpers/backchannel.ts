import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** One back-channel logout request as the site's endpoint saw it. */
export interface BackchannelRequest {
  method: string;
  contentType: string | undefined;
  /** The form's fields, every one (OpenID Back-Channel Logout 1.0 section 2.5 names only logout_token). */
  form: URLSearchParams;
  /** Over TLS: the protocol and cipher the provider's request used. */
  tls?: { protocol: string | null; cipher: string };
  /** The status the endpoint answered. */
  status: number;
  /** When it arrived (Date.now(): the clock the queue's delays are reckoned by, on this machine). */
  at: number;
}

export interface BackchannelReceiver {
  url: string;
  /** Every logout token received, in order. */
  tokens: string[];
  /** Every request received, in order. */
  requests: BackchannelRequest[];
  /** The logout tokens the endpoint answered 200 to (took), in order. */
  accepted: string[];
  /** Verifies a received token as a relying site must (signature, issuer, audience, typ). */
  verify(token: string, issuer: string, audience: string): Promise<JWTPayload>;
  close(): Promise<void>;
}

/**
 * A relying site's back-channel logout endpoint on 127.0.0.1: keeps every
 * logout token it gets and answers 200 with no-store, as a site does
 * (section 2.8). Over HTTPS with `tls`'s key and certificate (the provider
 * must then trust them: its `fetch`), at `path`.
 */
export async function startReceiver(opts: { tls?: { key: string; cert: string }; path?: string; statuses?: (n: number) => number } = {}): Promise<BackchannelReceiver> {
  const tokens: string[] = [];
  const accepted: string[] = [];
  const requests: BackchannelRequest[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const socket = req.socket as Partial<TLSSocket>;
      // `statuses`: the answer to the n-th request (0-based), as a site that is down answers; 200 by default.
      const status = opts.statuses?.(requests.length) ?? 200;
      requests.push({
        status,
        at: Date.now(),
        method: req.method ?? '',
        contentType: req.headers['content-type'],
        form,
        ...(socket.encrypted ? { tls: { protocol: socket.getProtocol!(), cipher: socket.getCipher!().name } } : {}),
      });
      tokens.push(form.get('logout_token') ?? '');
      if (status === 200) accepted.push(form.get('logout_token') ?? '');
      res.writeHead(status, { 'cache-control': 'no-store' }).end();
    });
  };
  const server: Server = opts.tls ? createTlsServer(opts.tls, handle) as unknown as Server : createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}${opts.path ?? '/backchannel-logout'}`,
    tokens,
    requests,
    accepted,
    async verify(token, issuer, audience) {
      const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
      const { payload } = await jwtVerify(token, jwks, { issuer, audience, typ: 'logout+jwt' });
      return payload;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
