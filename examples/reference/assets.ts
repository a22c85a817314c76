import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import type { Middleware } from 'koa';

/**
 * The passkey script, served from the service's own origin (never a CDN):
 * @simplewebauthn/browser's bundle (the version the lock file pins) followed
 * by assets/passkeys.js, as one file named by its content's hash, so it can
 * be cached for good and the pages' CSP allows exactly that URL.
 */
function passkeyScript(): { path: string; body: string } {
  // The package exports no path to its bundle: find it beside its entry point.
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  const root = join(dirname(entry), '..');
  const bundle = readFileSync(join(root, 'dist/bundle/index.umd.min.js'), 'utf8');
  const own = readFileSync(new URL('./assets/passkeys.js', import.meta.url), 'utf8');
  const body = `${bundle}\n${own}`;
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { path: `/assets/passkeys-${hash}.js`, body };
}

export interface Assets {
  /** The passkey script's path (with its hash). */
  passkeyScript: string;
  routes: Middleware;
}

export function assets(): Assets {
  const script = passkeyScript();
  return {
    passkeyScript: script.path,
    routes: async (ctx, next) => {
      if (ctx.path !== script.path || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
      ctx.set({
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
        'Cross-Origin-Resource-Policy': 'same-origin',
      });
      ctx.body = script.body;
      return undefined;
    },
  };
}
