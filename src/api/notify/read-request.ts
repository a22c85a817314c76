import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import { readJson } from '../../http/body.ts';
import { PluginError } from '../../http/errors.ts';
import { validate } from '../../http/validate.ts';
import { isCategory } from '../../notify/categories.ts';
import { MAX_BODY, MAX_TITLE, type NotificationRequest } from '../../notify/notification.ts';
import { siteHosts, urlAllowed } from '../../sites/own-site.ts';
import type { NotifyState } from './state.ts';

/** Request bodies larger than this are refused before parsing. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Length as people count it, near enough: code points (an emoji is one, a surrogate pair is not two). */
const codePoints = (s: string) => [...s].length;
// Control characters (C0, DEL, C1); the body may keep newline and tab.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;
const CONTROL_BUT_NL_TAB = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u;

/** A string field: missing and mistyped each said so in plain words. */
const field = () => z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

const text = (max: number, control: RegExp, controlMessage: string) => field()
  .min(1, 'must not be empty')
  .refine((s) => codePoints(s) <= max, `at most ${max} characters`)
  .refine((s) => !control.test(s), controlMessage);

/** SPEC "Notification request": all four required (the spec leaves it open), url optional. */
export const notificationRequest = z.object({
  sub: field().min(1, 'must not be empty').max(255, 'at most 255 characters'),
  category: field(),
  title: text(MAX_TITLE, CONTROL, 'must not contain control characters'),
  body: text(MAX_BODY, CONTROL_BUT_NL_TAB, 'must not contain control characters other than newline and tab'),
  url: field().max(2048, 'at most 2048 characters').optional(),
}).strict() satisfies z.ZodType<NotificationRequest>;

/**
 * Step 2: the request, read and checked: JSON of at most 16 KiB, the fields
 * (SPEC "Notification request"), the category (`unknown_category`), the url
 * on the site's own host (`url_not_allowed`), an Idempotency-Key.
 */
export const readRequest: Middleware<NotifyState> = async (ctx, next) => {
  const body = await readJson(ctx, MAX_BODY_BYTES);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new errors.InvalidRequest('body must be a JSON object');
  const request = validate(notificationRequest, body);
  if (!isCategory(request.category)) {
    throw new PluginError('unknown_category', 'category must be one of transactional, product, promotions');
  }
  if (request.url !== undefined && !urlAllowed(request.url, siteHosts(ctx.state.client))) {
    throw new PluginError('url_not_allowed', 'url must be an https address on the site’s own host');
  }
  const key = ctx.get('idempotency-key');
  if (key) {
    if (key.length > 255 || !/^[\x21-\x7E]+$/.test(key)) throw new errors.InvalidRequest('Idempotency-Key: at most 255 visible ASCII characters');
    ctx.state.idempotencyKey = key;
  }
  ctx.state.request = request;
  await next();
};
