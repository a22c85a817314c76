/** The plugin's `upstreamSignals` option (src/options.ts), validated at the boundary (docs/upstream-signals.md has every default). */
import { z } from 'zod';

import { UPSTREAM_EVENT_TYPES } from './upstream-signals/events.ts';
import type { LinkedAccountLookup } from './upstream-signals/receiver.ts';

const fn = <T>(message: string) => z.custom<T>((v) => typeof v === 'function', { message });

export const upstreamSignalsOptions = z.object({
  upstreams: z.array(z.object({
    /** The upstream's id as the host's sign-in names it (lower-case letters, digits, hyphens): the push URL is `/upstream-signals/<id>`. */
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and hyphens'),
    /** How the person's notices name it ("Google"). */
    name: z.string().min(1).max(100),
    /** The SETs' `iss` (Google: `https://accounts.google.com/`). */
    issuer: z.url(),
    /** The `aud` values it addresses this service by (Google: the service's OAuth client ids); at least one. */
    audiences: z.array(z.string().min(1)).min(1),
    /** Its JWKS (an SSF transmitter's `jwks_uri`); or `configurationUrl`. */
    jwksUri: z.url().optional(),
    /** Its SSF or RISC configuration document, whose `jwks_uri` is used (Google: `https://accounts.google.com/.well-known/risc-configuration`). */
    configurationUrl: z.url().optional(),
    /** The event types acted on; by default every one the receiver knows. */
    events: z.array(z.enum(UPSTREAM_EVENT_TYPES as [string, ...string[]])).default([...UPSTREAM_EVENT_TYPES]),
    /** Accept SETs without `typ: secevent+jwt` (Google's Cross-Account Protection sends none). Default false. */
    allowUntypedSets: z.boolean().default(false),
    /**
     * Poll its stream (RFC 8936) instead of waiting for pushes: the poll
     * endpoint, and the client credentials at its token endpoint (scope
     * `ssf.read` by default), every `everyMs` (default 30 s).
     */
    poll: z.object({
      endpoint: z.url(),
      tokenEndpoint: z.url(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      scope: z.string().default('ssf.read'),
      everyMs: z.number().int().min(1000).max(60 * 60_000).default(30_000),
    }).strict().optional(),
    /**
     * Our client credentials at an SSF transmitter (with `configurationUrl`, its
     * ssf-configuration): `plugin.upstreamSignals.connect(id)` makes or adopts
     * the push stream to `/upstream-signals/<id>` there and verifies it.
     */
    stream: z.object({
      tokenEndpoint: z.url(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      scope: z.string().default('ssf.manage'),
    }).strict().optional(),
  }).strict().refine((u) => (u.jwksUri === undefined) !== (u.configurationUrl === undefined), { message: 'give jwksUri or configurationUrl (one of them)' })).default([]),
  /**
   * The account linked to an upstream's subject (`{ iss, sub }` or a verified
   * `{ email }`): `{ accountId, sub }` with the upstream `sub` of the link, or
   * undefined. Never an account matched by address alone. Needed with `upstreams`.
   */
  account: fn<LinkedAccountLookup>('must be a function (upstreamId, subject) => { accountId, sub } | undefined').optional(),
  /** The account of an address at this service, for Global Token Revocation's `email` subjects. Without it such a subject is one of no account (404). */
  accountByEmail: fn<(email: string) => Promise<string | undefined> | string | undefined>('must be a function email => accountId | undefined').optional(),
  /** How old a SET's `iat` may be (s); its `jti` is remembered this long. Default 1 day. */
  maxAgeSeconds: z.number().int().min(60).max(7 * 86_400).default(86_400),
  /** The largest SET body accepted (bytes). Default 16 KiB. */
  maxBodyBytes: z.number().int().min(1024).max(1024 * 1024).default(16 * 1024),
  /**
   * Global Token Revocation (draft-parecki-oauth-global-token-revocation):
   * clients allowed to call `/global-token-revocation`, with an access token
   * carrying `scope`. None by default (the endpoint answers 403).
   */
  globalTokenRevocation: z.object({
    clients: z.array(z.string().min(1)).default([]),
    scope: z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/).default('global_token_revocation'),
  }).strict().prefault({}),
}).strict().refine((o) => o.upstreams.length === 0 || o.account !== undefined, { message: 'upstreams need an account lookup (upstreamSignals.account)' })
  .refine((o) => new Set(o.upstreams.map((u) => u.id)).size === o.upstreams.length, { message: 'two upstreams have one id' }).prefault({});
