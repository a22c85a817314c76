/**
 * A RISC transmitter as Google's Cross-Account Protection documents one:
 * its configuration document at `/.well-known/risc-configuration` (issuer,
 * jwks_uri), its signing keys at that jwks_uri, and SETs whose subject is
 * inside the event (`subject_type: iss-sub`) with no `typ` header, pushed as
 * `application/secevent+jwt`. Its issuer ends with a slash, as Google's does
 * (`https://accounts.google.com/`).
 */
import { createServer, type Server } from 'node:http';

import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

import { freePort } from './net.ts';

export const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
export const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';

export interface RiscTransmitter {
  issuer: string;
  configurationUrl: string;
  /** Signs a SET: Google's shape unless `header`/`claims` say otherwise (`key`: another signing key; `kid`: another key id). */
  sign(claims: Record<string, unknown>, opts?: { key?: CryptoKey; kid?: string; typ?: string }): Promise<string>;
  /** A key pair the transmitter never published. */
  strangerKey(): Promise<CryptoKey>;
  /** Google's event for an upstream `sub`: the subject inside the event. */
  event(type: string, sub: string, extra?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startRiscTransmitter(): Promise<RiscTransmitter> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}/`;
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'risc-1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/risc-configuration') {
      res.end(JSON.stringify({
        issuer, jwks_uri: `${issuer}jwks`, delivery_methods_supported: ['https://schemas.openid.net/secevent/risc/delivery-method/push'],
        add_subject_endpoint: `${issuer}v1/subjects:add`, remove_subject_endpoint: `${issuer}v1/subjects:remove`,
      }));
    } else if (req.url === '/jwks') {
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    configurationUrl: `${issuer}.well-known/risc-configuration`,
    async sign(claims, opts = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? 'risc-1', ...(opts.typ ? { typ: opts.typ } : {}) })
        .sign(opts.key ?? privateKey);
    },
    async strangerKey() {
      return (await generateKeyPair('RS256')).privateKey;
    },
    event(type, sub, extra = {}) {
      return { [type]: { subject: { subject_type: 'iss-sub', iss: issuer, sub }, ...extra } };
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
