import { errors } from 'oidc-provider';
import type { z } from 'zod';

/**
 * The one validate step of every JSON body the plugin reads: the schema's
 * first problem becomes `invalid_request` naming the field (`title: at most
 * 120 characters`, `unknown field "x"`). zod stays at this boundary.
 */
export function validate<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const at = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    throw new errors.InvalidRequest(`unknown field ${issue.keys.map((k) => `"${at ? `${at}.` : ''}${k}"`).join(', ')}`);
  }
  throw new errors.InvalidRequest(`${at || 'body'}: ${issue.message}`);
}
