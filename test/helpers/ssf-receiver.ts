/**
 * A Shared Signals receiver as a relying site writes one with jose: its push
 * endpoint on 127.0.0.1 (RFC 8935: 202 for each SET) that keeps every
 * request, and the checks every SET must pass (RFC 8417, SSF 1.0, the CAEP
 * interoperability profile) against the provider's JWKS from discovery.
 * Also the receiver's token (client credentials) and its calls to the
 * transmitter, each answer checked against the OpenAPI document.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import * as oidc from 'openid-client';

import { documentedFetch } from './openapi.ts';

export interface PushedSet {
  set: string;
  contentType: string | undefined;
  authorization: string | undefined;
  /** The status the receiver answered. */
  status: number;
  /** When it arrived (Date.now(): the clock the queue's delays are reckoned by, on this machine). */
  at: number;
}

export interface SsfReceiver {
  url: string;
  pushed: PushedSet[];
  /** Waits until `count` SETs arrived (at most 10 s), then returns them all. */
  received(count: number): Promise<PushedSet[]>;
  close(): Promise<void>;
}

/** A push receiver on 127.0.0.1; `statuses`: the answer to the n-th push (0-based), 202 by default. */
export async function startSsfReceiver(path = '/ssf/push', statuses: (n: number) => number = () => 202): Promise<SsfReceiver> {
  const pushed: PushedSet[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const status = statuses(pushed.length);
      pushed.push({ set: body, contentType: req.headers['content-type'], authorization: req.headers.authorization, status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    pushed,
    async received(count) {
      for (let i = 0; i < 200 && pushed.length < count; i += 1) await new Promise((r) => setTimeout(r, 50));
      return pushed;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export interface SsfMetadata {
  issuer: string;
  jwks_uri: string;
  [name: string]: unknown;
}

/**
 * Verifies a SET as a receiver must and checks every claim rule: typ
 * secevent+jwt, RS256 against the JWKS, iss, aud, iat not in the future, a
 * jti, exactly one event, top-level sub_id, no sub, no exp. Returns the
 * payload and its one event.
 */
export async function verifySet(set: string, metadata: SsfMetadata, audience: string): Promise<{ payload: JWTPayload & Record<string, unknown>; type: string; event: Record<string, unknown> }> {
  const header = decodeProtectedHeader(set);
  expect(header.typ).to.equal('secevent+jwt');
  expect(header.alg).to.equal('RS256');
  const { payload } = await jwtVerify(set, createRemoteJWKSet(new URL(metadata.jwks_uri)), {
    issuer: metadata.issuer, audience, typ: 'secevent+jwt', algorithms: ['RS256'],
  });
  expect(payload).to.not.have.property('sub');
  expect(payload).to.not.have.property('exp');
  expect(payload.jti).to.be.a('string').and.not.equal('');
  expect(payload.iat).to.be.a('number').and.at.most(Math.ceil(Date.now() / 1000));
  expect(payload).to.have.property('sub_id');
  const events = payload.events as Record<string, Record<string, unknown>>;
  expect(Object.keys(events)).to.have.length(1);
  const [type, event] = Object.entries(events)[0]!;
  return { payload: payload as JWTPayload & Record<string, unknown>, type, event };
}

/** A receiver's token: client credentials with the Shared Signals scope asked for. */
export async function receiverToken(config: oidc.Configuration, scope: string): Promise<string> {
  return (await oidc.clientCredentialsGrant(config, { scope })).access_token;
}

/** A call to the transmitter as a receiver makes it, the answer checked against the OpenAPI document. */
export async function ssfCall(issuer: string, method: string, path: string, bearer: string | undefined, body?: unknown): Promise<{ status: number; body: Record<string, unknown> | undefined; headers: Headers }> {
  const res = await documentedFetch(`${issuer}${path}`, {
    method,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : undefined, headers: res.headers };
}
