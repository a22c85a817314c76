/**
 * The HTTP operations: what each request carries and what a right answer
 * looks like. Operations 1 to 5 of the issue; 5 (/api/notify) is A only,
 * D (the floor) runs in operations 1 to 4 only.
 */
import { CODE_VERIFIER, REDIRECT_URI, type TokenKind } from '../mint.ts';
import { BASIC_AUTH } from '../host.ts';

export type HttpOpName = 'introspect' | 'introspect-revoked' | 'refresh' | 'code' | 'revoke' | 'notify';

export interface HttpOp {
  name: HttpOpName;
  title: string;
  path: string;
  headers: Record<string, string>;
  /**
   * What a request needs: a fresh token each (`once`), a token from a pool
   * presented again and again (`pool`), or a person connected to the site.
   */
  needs: { kind: TokenKind; use: 'once' | 'pool' } | 'person';
  /** Servers it runs on. */
  servers: ('A' | 'B' | 'C' | 'D')[];
  body(value: string): string;
  /** Whether a 2xx body is the right answer. */
  expect(body: string): boolean;
}

const form = { authorization: BASIC_AUTH, 'content-type': 'application/x-www-form-urlencoded' };
const issued = (body: string) => body.includes('"access_token"') && body.includes('"refresh_token"') && body.includes('"id_token"');

/** A notification as a shop would send it (about 300 characters, an https link on the site's own host). */
export const NOTIFICATION = {
  category: 'transactional',
  title: 'Your order #1234 has shipped',
  body: 'Good news: your order #1234 left our warehouse today and should arrive on Tuesday. '
    + 'You can follow the parcel from your account page. If anything looks wrong, reply to this message '
    + 'or write to support; we answer within one working day.\nThank you for shopping with us.',
  url: 'https://site.example/orders/1234',
};

export const HTTP_OPS: Record<HttpOpName, HttpOp> = {
  introspect: {
    name: 'introspect',
    title: '1. Introspection, valid opaque access token',
    path: '/token/introspection',
    headers: form,
    needs: { kind: 'access', use: 'pool' },
    servers: ['A', 'B', 'C', 'D'],
    body: (token) => `token=${token}&token_type_hint=access_token`,
    expect: (body) => body.includes('"active":true'),
  },
  'introspect-revoked': {
    name: 'introspect-revoked',
    title: '1b. Introspection, revoked access token',
    path: '/token/introspection',
    headers: form,
    needs: { kind: 'revoked-access', use: 'pool' },
    servers: ['A', 'B', 'C', 'D'],
    body: (token) => `token=${token}&token_type_hint=access_token`,
    expect: (body) => body === '{"active":false}',
  },
  refresh: {
    name: 'refresh',
    title: '2. Refresh with rotation',
    path: '/token',
    headers: form,
    needs: { kind: 'refresh', use: 'once' },
    servers: ['A', 'B', 'C', 'D'],
    body: (token) => `grant_type=refresh_token&refresh_token=${token}`,
    expect: issued,
  },
  code: {
    name: 'code',
    title: '3. Authorization-code exchange (PKCE)',
    path: '/token',
    headers: form,
    needs: { kind: 'code', use: 'once' },
    servers: ['A', 'B', 'C', 'D'],
    body: (code) => `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&code_verifier=${CODE_VERIFIER}`,
    expect: issued,
  },
  revoke: {
    name: 'revoke',
    title: '4. Revocation of one access token',
    path: '/token/revocation',
    headers: form,
    needs: { kind: 'access', use: 'once' },
    servers: ['A', 'B', 'C', 'D'],
    body: (token) => `token=${token}&token_type_hint=access_token`,
    expect: (body) => body === '',
  },
  notify: {
    name: 'notify',
    title: '5. POST /api/notify, transactional, letter queued',
    path: '/api/notify',
    headers: { authorization: BASIC_AUTH, 'content-type': 'application/json' },
    needs: 'person',
    servers: ['A'],
    body: (sub) => JSON.stringify({ sub, ...NOTIFICATION }),
    expect: (body) => body === '{"inApp":true,"email":true,"skipped":null}',
  },
};

/** The operations D runs in: the timed token operations, which B runs too. */
export type FloorOpName = Exclude<HttpOpName, 'notify'>;

/**
 * D's Redis round trips per request, N PINGs before the route (bench/servers.ts
 * startD). These are A's figures as the report's "round trips/req" shows them
 * (one request at a time, on A's connection; quick runs of 2026-11-23, A being
 * the host with the plugin, accounts in memory). The revoked token is looked
 * up as an access token, then as a refresh token (oidc-provider tries the
 * other kinds after the hinted one), hence 2. Written down rather than copied from
 * A during the run so that D is the same server in every run and A's round
 * trips stay a measurement: the report flags an operation where A's measured
 * round trips differ from N.
 */
export const D_ROUND_TRIPS: Record<FloorOpName, number> = {
  introspect: 1,
  'introspect-revoked': 2,
  refresh: 2,
  code: 2,
  revoke: 2,
};

/** N of the table above for an operation D runs in, undefined for the others. */
export const floorRoundTrips = (name: HttpOpName): number | undefined => (name === 'notify' ? undefined : D_ROUND_TRIPS[name]);
