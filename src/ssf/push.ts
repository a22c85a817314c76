import * as http from 'node:http';
import * as https from 'node:https';

import { guardedLookup, OutboundRefused, specialUseHost } from './outbound-guard.ts';

/** At most this much of a receiver's answer is read (its `err` is all we want of it). */
const MAX_ANSWER_BYTES = 4096;

/** What the receiver answered (RFC 8935 section 2.3): its status, and the `err` code of a 400's JSON body (setErrorCode). */
export interface PushAnswer {
  status: number;
  err?: string | undefined;
}

/**
 * The Security Event Token error codes (IANA registry, RFC 8935 section
 * 2.4, SSF 1.0's `invalid_state`): what a receiver reports of a SET, pushed
 * (a 400's `err`) or polled (`setErrs`). Logs name one of these or `other`,
 * never the receiver's own string.
 */
const SET_ERROR_CODES = new Set(['invalid_request', 'invalid_key', 'invalid_issuer', 'invalid_audience', 'authentication_failed', 'access_denied', 'invalid_state']);

/** A receiver's error code as logs may name it. */
export function setErrorCode(err: unknown): string {
  return typeof err === 'string' && SET_ERROR_CODES.has(err) ? err : 'other';
}

function errOf(body: string): string {
  try {
    return setErrorCode((JSON.parse(body) as { err?: unknown }).err);
  } catch {
    return 'other';
  }
}

/**
 * Why an endpoint may not be pushed to, or undefined: a user or password in
 * it, http to a host not in allowPrivateFetchHosts, or a host that is
 * loopback or private by its spelling (outbound-guard.ts specialUseHost).
 * The same check answers a stream's creation (400) and stops each push.
 */
export function refusedEndpoint(url: URL, allowedHosts: ReadonlySet<string>): string | undefined {
  if (url.username || url.password) return 'must not hold a user name or password';
  if (allowedHosts.has(url.hostname.toLowerCase())) return undefined;
  if (url.protocol !== 'https:') return 'must be https';
  if (specialUseHost(url.hostname)) return 'a private address (allowed only for the hosts in allowPrivateFetchHosts)';
  return undefined;
}

/**
 * Sends SETs to push receivers (RFC 8935 section 2) over node:http(s), with
 * the outbound guard: a host not in `allowedHosts` is resolved by
 * guardedLookup, so a name that resolves to a loopback, private or
 * special-use address is refused before a socket connects and the stream's
 * Authorization header never leaves. No redirect is followed (node's client
 * follows none); the answer is read up to 4 KiB.
 */
export function createPusher(options: { allowedHosts: readonly string[]; timeoutMs: number }) {
  const allowed = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  // Kept-alive connections: each was checked when it connected. Only https reaches a host not allowed (refusedEndpoint).
  const guarded = new https.Agent({ keepAlive: true, lookup: guardedLookup });
  const open = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  return function post(endpoint: string, headers: Record<string, string>, body: string): Promise<PushAnswer> {
    const url = new URL(endpoint);
    const refused = refusedEndpoint(url, allowed);
    if (refused) return Promise.reject(new OutboundRefused(`endpoint_url: ${refused}`));
    const tls = url.protocol === 'https:';
    const agent = !allowed.has(url.hostname.toLowerCase()) ? guarded : tls ? open.https : open.http;
    return new Promise<PushAnswer>((resolve, reject) => {
      const req = (tls ? https : http).request(url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      req.on('error', (err) => {
        // Stryker disable next-line CallExpression: a request that failed is destroyed already; the timer's destroy then does nothing
        clearTimeout(timer);
        reject(err);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          resolve({ status, ...(status === 400 ? { err: errOf(Buffer.concat(chunks).toString('utf8').slice(0, MAX_ANSWER_BYTES)) } : {}) });
        };
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
          // A receiver that answers at length is not read to its end: the connection goes.
          else if (!res.destroyed) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      req.end(body);
    });
  };
}

export type Pusher = ReturnType<typeof createPusher>;
