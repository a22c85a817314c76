import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export interface BackchannelReceiver {
  url: string;
  /** Every logout token received, in order. */
  tokens: string[];
  /** Verifies a received token as a relying site must (signature, issuer, audience, typ). */
  verify(token: string, issuer: string, audience: string): Promise<JWTPayload>;
  close(): Promise<void>;
}

/** A relying site's back-channel logout endpoint on 127.0.0.1: keeps every logout token it gets. */
export async function startReceiver(): Promise<BackchannelReceiver> {
  const tokens: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      tokens.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/backchannel-logout`,
    tokens,
    async verify(token, issuer, audience) {
      const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
      const { payload } = await jwtVerify(token, jwks, { issuer, audience, typ: 'logout+jwt' });
      return payload;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
