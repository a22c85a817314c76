import { z } from 'zod';
import type { ZodOpenApiResponseObject, ZodOpenApiResponsesObject } from 'zod-openapi';

import { ERRORS, type ErrorName } from '../../http/error-codes.ts';

type Headers = Record<string, z.ZodType>;

/** Retry-After (RFC 9110 section 10.2.3), in seconds, as the plugin sends it. */
export const retryAfter = z.int().min(1).meta({ description: 'Seconds to wait before trying again (RFC 9110 section 10.2.3).' });

/** The headers every answer of a catalog error carries, whatever the route. */
const ALWAYS: Partial<Record<ErrorName, Headers>> = {
  rate_limited: { 'Retry-After': retryAfter },
  temporarily_unavailable: { 'Retry-After': retryAfter },
};

/** `{ error, error_description }`, with `error` one of `codes`. */
export function errorAnswer(codes: readonly [string, ...string[]]) {
  return z.object({
    error: z.enum(codes).meta({ description: 'The error code (RFC 6749 section 5.2 where it has one; docs/errors.md lists them all).' }),
    error_description: z.string().meta({ description: 'What went wrong, in English, for the site\'s developers (`invalid_request` names the field).' }),
  }).strict();
}

/**
 * The error answers of a route, one per status: the catalog's errors it can
 * answer (src/http/error-codes.ts), grouped by their status, each group's
 * codes and meanings; `headers` adds a route's own (a 401's challenge). A
 * header is required where every error of the status carries it.
 */
export function errorResponses(names: readonly ErrorName[], headers: Partial<Record<ErrorName, Headers>> = {}): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of names) byStatus.set(ERRORS[name].status, [...(byStatus.get(ERRORS[name].status) ?? []), name]);
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const codes = [...new Set(group.map((name) => ERRORS[name].code))] as [string, ...string[]];
    const carried = group.map((name) => ({ ...ALWAYS[name], ...headers[name] }));
    const shape: Headers = {};
    for (const header of new Set(carried.flatMap((h) => Object.keys(h)))) {
      const schema = carried.find((h) => h[header])![header]!;
      shape[header] = carried.every((h) => h[header]) ? schema : schema.optional();
    }
    const response: ZodOpenApiResponseObject = {
      description: group.map((name) => `\`${ERRORS[name].code}\`: ${ERRORS[name].meaning}`).join('\n\n'),
      content: { 'application/json': { schema: errorAnswer(codes) } },
    };
    if (Object.keys(shape).length > 0) response.headers = z.object(shape);
    responses[`${status}` as `${4 | 5}${string}`] = response;
  }
  return responses;
}
