/**
 * The demo site's plain node:http plumbing: cookies, answers with the site's
 * headers and Content-Security-Policy, and form bodies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { STYLE_HASH } from './pages.ts';

/** One route of the site. */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** The cookies a request carries, by name. */
export function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/** An application/x-www-form-urlencoded body (64 KiB at most); any other body reads as empty. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return new URLSearchParams();
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 64 * 1024) throw Object.assign(new Error('body too large'), { status: 413 });
  }
  return new URLSearchParams(body);
}

/**
 * The site's answers. Cookies are HttpOnly and SameSite=Lax, and Secure when
 * the site is on https; every answer is no-store, nosniff and no-referrer.
 */
export function responses(options: { secureCookies: boolean; providerOrigin: string }) {
  function cookie(name: string, value: string, maxAge?: number): string {
    return [
      `${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax',
      ...(options.secureCookies ? ['Secure'] : []),
      ...(maxAge !== undefined ? [`Max-Age=${maxAge}`] : []),
    ].join('; ');
  }

  const clearCookie = (name: string) => `${cookie(name, '', 0)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;

  function headers(setCookies: string[] = []): Record<string, string | string[]> {
    return {
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      ...(setCookies.length ? { 'set-cookie': setCookies } : {}),
    };
  }

  function page(res: ServerResponse, status: number, html: string, setCookies: string[] = []): void {
    res.writeHead(status, {
      ...headers(setCookies),
      'content-type': 'text/html; charset=utf-8',
      // No scripts; one hashed style; forms post here, and "Sign out everywhere"
      // redirects a form submission on to the provider.
      'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self' ${options.providerOrigin}; frame-ancestors 'none'; base-uri 'none'`,
    });
    res.end(html);
  }

  function redirect(res: ServerResponse, location: string, setCookies: string[] = []): void {
    res.writeHead(303, { ...headers(setCookies), location });
    res.end();
  }

  return { cookie, clearCookie, headers, page, redirect };
}

export type Responses = ReturnType<typeof responses>;
