import type { Context } from 'koa';

import { errors } from 'oidc-provider';

/**
 * Reads a request body of at most `limit` bytes. The plugin's routes parse
 * their own bodies, route by route: a global body parser ahead of
 * oidc-provider would break it.
 */
export async function readBody(ctx: Context, limit: number): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new errors.InvalidRequest(`request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new errors.InvalidRequest(`request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An application/x-www-form-urlencoded body as a plain object (first value of each name). */
export async function readForm(ctx: Context, limit = 16 * 1024): Promise<Record<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new errors.InvalidRequest('content type must be application/x-www-form-urlencoded');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(await readBody(ctx, limit))) {
    if (!(name in form)) form[name] = value;
  }
  return form;
}
