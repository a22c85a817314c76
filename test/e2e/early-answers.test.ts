/**
 * An answer decided before the body is read (wrong client, wrong content
 * type, no session, a bad unsubscribe link) waits for the body: a server that
 * answers and closes while the client is still sending gives the client a TCP
 * reset instead of the answer. Driven over a raw socket with
 * `Connection: close`, the body sent in two parts.
 */
import { connect } from 'node:net';

import { expect } from 'chai';

import { expectDocumented, rawAnswer } from '../helpers/openapi.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('early-site');

interface Exchange {
  /** What the server sent before the client finished its body. */
  beforeBody: string;
  response: string;
  error?: string;
}

async function exchange(h: Harness, head: string, body: string): Promise<Exchange> {
  const socket = connect(Number(new URL(h.issuer).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let response = '';
  let error: string | undefined;
  socket.on('data', (d: Buffer) => { response += d.toString(); });
  socket.on('error', (err) => { error = err.message; });
  const ended = new Promise((resolve) => socket.once('close', resolve));
  socket.write(`${head}\r\nHost: 127.0.0.1\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`);
  socket.write(body.slice(0, 100));
  await new Promise((r) => setTimeout(r, 250));
  const beforeBody = response;
  if (!socket.destroyed) socket.write(body.slice(100));
  await ended;
  return { beforeBody, response, ...(error ? { error } : {}) };
}

describe('early answers wait for the body', () => {
  let h: Harness;
  before(async () => { h = await startHarness('early', { clients: [site] }); });
  after(() => h.close());

  const json = JSON.stringify({ sub: 'someone', category: 'product', title: 'Hello', body: 'x'.repeat(12_000) });
  const basic = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;
  const cases: [string, string, string, RegExp][] = [
    ['/api/notify with a wrong secret', `POST /api/notify HTTP/1.1\r\nContent-Type: application/json\r\nAuthorization: Basic ${Buffer.from('early-site:wrong').toString('base64')}`, json, /^HTTP\/1\.1 401 [\s\S]*"error":"invalid_client"/],
    ['/api/notify with the wrong content type', `POST /api/notify HTTP/1.1\r\nContent-Type: text/plain\r\nAuthorization: ${basic}`, json, /^HTTP\/1\.1 400 [\s\S]*"error_description":"content type must be application\/json"/],
    ['the console API without a session', 'POST /console/api/sites/early-site/block HTTP/1.1\r\nContent-Type: application/json\r\nSec-Fetch-Site: same-origin', json, /^HTTP\/1\.1 401 [\s\S]*"error":"login_required"/],
    ['an unsubscribe link that is not valid', 'POST /unsubscribe/not-a-token HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded', `List-Unsubscribe=One-Click&pad=${'x'.repeat(12_000)}`, /^HTTP\/1\.1 400 [\s\S]*<html/],
  ];
  for (const [name, head, body, expected] of cases) {
    it(`${name}: nothing before the body is in, then the whole answer, no reset`, async () => {
      const result = await exchange(h, head, body);
      expect(result.beforeBody).to.equal('');
      expect(result.error).to.equal(undefined);
      expect(result.response).to.match(expected);
      if (head.startsWith('POST /api/notify ')) expectDocumented('POST', '/api/notify', rawAnswer(result.response));
    });
  }
});
