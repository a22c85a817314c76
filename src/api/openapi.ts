import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import Router from '@koa/router';

import type { Logger } from '../host.ts';
import { jsonErrors } from '../http/errors.ts';

/** Where the plugin serves its OpenAPI document (docs/api.md). */
export const OPENAPI_PATH = '/api/openapi.json';

/**
 * The document's bytes. In the package: dist/openapi.json, which
 * scripts/build.ts generated (zod-openapi, its generator, is a
 * devDependency: docs/choices.md). Run from the sources (no build): generated
 * here from them, with the devDependency a checkout has.
 */
async function documentBytes(): Promise<Buffer> {
  if (!import.meta.url.endsWith('.ts')) return readFile(new URL('../../openapi.json', import.meta.url));
  // A specifier in a variable: bundlers and tsc leave the generator out of the package's graph.
  const generator = './openapi/document.ts';
  const { openApiJson } = await import(generator) as typeof import('./openapi/document.ts');
  return Buffer.from(openApiJson());
}

/** GET /api/openapi.json: the document, the same bytes on every request; its ETag answers a revalidation 304. */
export function openApiRoutes(logger: Logger): Router {
  let loaded: Promise<{ bytes: Buffer; etag: string }> | undefined;
  const load = () => documentBytes().then((bytes) => ({ bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` }));
  const router = new Router();
  router.get(OPENAPI_PATH, jsonErrors(logger), async (ctx) => {
    // Read once; a failed read is tried again on the next request.
    loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    const { bytes, etag } = await loaded;
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', etag);
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = bytes;
  });
  return router;
}
