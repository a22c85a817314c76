import type { HttpContext } from './context.ts';

/**
 * Whether a state-changing request comes from the service's own pages.
 * Browsers send Sec-Fetch-Site on every request and Origin on every POST,
 * PUT and DELETE; a request with neither is not from a browser page of ours
 * and is refused too (scripts read, they do not change a person's settings).
 */
export function sameOrigin(ctx: HttpContext, issuer: string): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = ctx.get('origin');
  return origin !== '' && origin === new URL(issuer).origin;
}
