import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import { readJson } from '../../http/body.ts';
import { PluginError } from '../../http/errors.ts';
import { validate } from '../../http/validate.ts';
import { CATEGORIES, isCategory } from '../../notify/categories.ts';
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

/** A JSON Schema pattern for text without any character of `control` (a class `[...]`): `^[^...]*$`. */
const without = (control: RegExp) => `^${control.source.replace('[', '[^')}*$`;

// The .meta() below is for the OpenAPI document only (src/api/openapi/): what the refinements check, in
// JSON Schema's words (its maxLength counts code points, as these do); validation does not read it.
const text = (max: number, control: RegExp, controlMessage: string, description: string) => field()
  .min(1, 'must not be empty')
  .refine((s) => codePoints(s) <= max, `at most ${max} characters`)
  .refine((s) => !control.test(s), controlMessage)
  .meta({ maxLength: max, pattern: without(control), description });

/** SPEC "Notification request": all four required (the spec leaves it open), url optional. */
export const notificationRequest = z.object({
  sub: field().min(1, 'must not be empty').max(255, 'at most 255 characters')
    .meta({ description: 'The person, as this site\'s ID token names them (`sub`; the pairwise identifier for a pairwise site).' }),
  // Any string passes here; a category not in the list is `unknown_category`, after the fields.
  category: field().meta({ enum: [...CATEGORIES], description: 'The message\'s category (SPEC "Categories"); another value is `400 unknown_category`.' }),
  title: text(MAX_TITLE, CONTROL, 'must not contain control characters', `At most ${MAX_TITLE} characters (code points), no control characters.`),
  body: text(MAX_BODY, CONTROL_BUT_NL_TAB, 'must not contain control characters other than newline and tab',
    `At most ${MAX_BODY} characters (code points); newline and tab are the only control characters allowed.`),
  url: field().max(2048, 'at most 2048 characters').optional()
    .meta({ format: 'uri', description: 'An https address on the site\'s own host (its `client_uri` and `redirect_uris`); another is `400 url_not_allowed`.' }),
}).strict() satisfies z.ZodType<NotificationRequest>;

/** The request headers the route reads; validated one by one, as they come (only a key that is there). */
export const notifyHeaders = z.object({
  'Idempotency-Key': z.string().regex(/^[\x21-\x7E]{1,255}$/, 'at most 255 visible ASCII characters').optional()
    .meta({ description: 'The same key from the same site within `notify.idempotencySeconds` (24 hours by default) gets the first answer again, and nothing is delivered twice.' }),
});

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
  // An empty header is no key.
  if (key) ctx.state.idempotencyKey = validate(notifyHeaders, { 'Idempotency-Key': key })['Idempotency-Key'];
  ctx.state.request = request;
  await next();
};
