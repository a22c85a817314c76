
import { errors } from 'oidc-provider';
import type { HttpContext } from './context.ts';

/** How much of an unread body an early answer waits for (and throws away) before it is sent. */
export const DISCARD_LIMIT = 64 * 1024;

const tooLarge = (limit: number) => new errors.InvalidRequest(`request body exceeds ${limit} bytes`);

/**
 * Reads a request body of at most `limit` bytes. The plugin's routes parse
 * their own bodies, route by route: a global body parser ahead of
 * oidc-provider would break it. Past the limit it stops collecting and
 * throws, leaving the stream open so the answer can still be sent
 * (`for await` would destroy the request, and the client get a reset).
 */
export async function readBody(ctx: HttpContext, limit: number): Promise<string> {
  return (await readBodyBytes(ctx, limit)).toString('utf8');
}

/** readBody, as bytes. */
export function readBodyBytes(ctx: HttpContext, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  if (ctx.req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const req = ctx.req;
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        reject(tooLarge(limit));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onClose = () => {
      done();
      reject(new errors.InvalidRequest('request body incomplete'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/**
 * Before an early answer (401, wrong content type, too large): reads what is
 * left of the body and throws it away, up to DISCARD_LIMIT, so the answer
 * reaches a client still sending. Answering and closing while it sends gives
 * it a TCP reset instead of the answer. Past the limit, or when the body is
 * declared larger, the connection closes after the answer.
 */
export async function discardBody(ctx: HttpContext): Promise<void> {
  const req = ctx.req;
  if (req.readableEnded || req.destroyed) return;
  if (Number(ctx.get('content-length') || 0) > DISCARD_LIMIT) {
    ctx.set('Connection', 'close');
    return;
  }
  let size = 0;
  await new Promise<void>((resolve) => {
    const finish = () => {
      req.off('data', onData).off('end', finish).off('error', finish).off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > DISCARD_LIMIT) {
        ctx.set('Connection', 'close');
        req.pause();
        finish();
      }
    };
    req.on('data', onData).on('end', finish).on('error', finish).on('close', finish);
    req.resume();
  });
}

/** An application/x-www-form-urlencoded body as a plain object (first value of each name). */
export async function readForm(ctx: HttpContext, limit = 16 * 1024): Promise<Record<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new errors.InvalidRequest('content type must be application/x-www-form-urlencoded');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(await readBody(ctx, limit))) {
    if (!(name in form)) form[name] = value;
  }
  return form;
}

/**
 * A form body as browsers and mail clients send it: urlencoded, or
 * multipart/form-data (RFC 7578; the form RFC 8058 recommends for one-click
 * unsubscribe), parsed by the platform's own FormData parser. Text fields
 * only; the first value of each name.
 */
export async function readAnyForm(ctx: HttpContext, limit = 16 * 1024): Promise<Record<string, string>> {
  if (!ctx.is('multipart/form-data')) return readForm(ctx, limit);
  const raw = await readBodyBytes(ctx, limit);
  let data: FormData;
  try {
    data = await new Response(raw, { headers: { 'content-type': ctx.get('content-type') } }).formData();
  } catch {
    throw new errors.InvalidRequest('malformed multipart/form-data body');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of data) {
    if (typeof value === 'string' && !(name in form)) form[name] = value;
  }
  return form;
}

/**
 * A JSON body of at most `limit` bytes, parsed: `application/json` only (a
 * form or text a page elsewhere could send is refused before it is read),
 * and `invalid_request` for one that is not JSON. What it holds is the
 * caller's to validate (./validate.ts).
 */
export async function readJson(ctx: HttpContext, limit: number): Promise<unknown> {
  if (!ctx.is('application/json')) throw new errors.InvalidRequest('content type must be application/json');
  const raw = await readBody(ctx, limit);
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new errors.InvalidRequest('body is not valid JSON');
  }
}
