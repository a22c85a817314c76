import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';

import { errorResponses, retryAfter } from './responses.ts';

/** RFC 8935 section 2.4's error answer: `err` of the IANA "Security Event Token Error Codes", and a description. */
const setError = (codes: readonly [string, ...string[]]) => z.object({
  err: z.enum(codes).meta({ description: 'The Security Event Token error code (RFC 8935 section 2.4).' }),
  description: z.string().meta({ description: 'What was wrong with the SET, in English, for the transmitter\'s operators.' }),
}).strict();
const SET_ERRORS = ['invalid_request', 'invalid_key', 'invalid_issuer', 'invalid_audience'] as const;
const json = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } } });

/** RFC 9493 subject identifiers the Global Token Revocation endpoint takes. */
const subjectIdentifier = z.union([
  z.object({ format: z.literal('email'), email: z.string().min(1).max(320) }).meta({ description: 'An address of an account here.' }),
  z.object({ format: z.literal('iss_sub'), iss: z.string().min(1), sub: z.string().min(1) }).meta({ description: 'The person\'s subject at a configured upstream (`iss` its SET issuer): the account linked to it; sign-in through that upstream is held too.' }),
  z.object({ format: z.literal('opaque'), id: z.string().min(1).max(256) }).meta({ description: 'The account\'s id here.' }),
]);

/** The receiving endpoints (docs/upstream-signals.md): an upstream's push, and Global Token Revocation. */
export const UPSTREAM_SIGNALS_OPENAPI_PATHS: ZodOpenApiPathsObject = {
  '/upstream-signals/{id}': {
    post: {
      operationId: 'upstreamSignalPush',
      summary: 'An upstream identity provider pushes a security event token (RFC 8935; SSF 1.0, RISC, CAEP)',
      description: 'The body is the SET itself, signed by a key the upstream publishes (its JWKS or its SSF/RISC configuration document). '
        + 'A SET about a subject linked to no account is acknowledged (202) and dropped.',
      requestParams: { path: z.object({ id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/).meta({ description: 'The upstream\'s id (option upstreamSignals.upstreams[].id).' }) }) },
      requestBody: { required: true, content: { 'application/secevent+jwt': { schema: z.string().regex(/^[\w-]+\.[\w-]+\.[\w-]+$/).meta({ description: 'The SET, a compact JWS (RFC 8417).' }) } } },
      responses: {
        202: { description: 'Accepted: verified, and acted on (or dropped for an unknown subject).' },
        400: { description: 'Refused: not a SET, a key the upstream does not publish, another issuer or audience, an iat out of the window, a jti received already, no event acted on.', ...json(setError(SET_ERRORS)) },
        404: { description: 'No such upstream.', ...json(setError(['invalid_request'])) },
        413: { description: 'The body is over upstreamSignals.maxBodyBytes.', ...json(setError(['invalid_request'])) },
        503: { description: 'The upstream\'s keys cannot be fetched right now, or the store is unavailable; try again.', headers: z.object({ 'Retry-After': retryAfter }), ...json(z.object({ err: z.string(), description: z.string() }).or(z.object({ error: z.string(), error_description: z.string() }))) },
      },
    },
  },
  '/global-token-revocation': {
    post: {
      operationId: 'globalTokenRevocation',
      summary: 'End every session, grant and refresh token of a person (draft-parecki-oauth-global-token-revocation)',
      security: [{ gtrBearer: ['global_token_revocation'] }],
      requestBody: { required: true, ...json(z.object({ sub_id: subjectIdentifier }).meta({ description: 'The person, as an RFC 9493 subject identifier (`subject` in drafts before -06 is read too).' })) },
      responses: {
        204: { description: 'Every way in of the person ended; they sign in again, and are told.' },
        ...errorResponses(['invalid_request', 'invalid_token', 'insufficient_scope', 'client_not_allowed', 'user_not_found', 'temporarily_unavailable', 'server_error'], {
          invalid_token: { 'WWW-Authenticate': z.string().regex(/^Bearer /) },
          insufficient_scope: { 'WWW-Authenticate': z.string().regex(/^Bearer /) },
        }),
      },
    },
  },
};
