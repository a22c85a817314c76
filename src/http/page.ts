import type { Context } from 'koa';

import { pageHeaders, type Page } from '../../views/layout.ts';

/** Answers with a rendered page and its headers (CSP, no-store, nosniff, no framing). */
export function sendPage(ctx: Pick<Context, 'status' | 'type' | 'body' | 'set'>, page: Page, status = 200): void {
  ctx.status = status;
  ctx.set(pageHeaders(page.csp));
  ctx.type = 'html';
  ctx.body = page.html;
}
