import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import { readBody } from '../http/body.ts';
import { jsonErrors, PluginError } from '../http/errors.ts';
import type { ContactLookup, Logger } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { isCategory, type Category, type SkipReason } from './categories.ts';
import type { LetterQueue } from './letters.ts';
import type { Senders } from './senders.ts';
import { siteHosts, urlAllowed } from './own-site.ts';
import { notifyKeys, siteAndPersonSteps } from './site-and-person.ts';

/** The answer of a 202 (SPEC "Notification result"). */
export interface NotificationResult {
  inApp: boolean;
  email: boolean;
  skipped: SkipReason | null;
}

export interface RateLimit {
  limit: number;
  windowSeconds: number;
}

export interface NotifyDeps {
  provider: Provider;
  store: Store;
  sites: ConnectedSites;
  orgs: Organizations;
  senders: Senders;
  contacts: ContactLookup;
  queue: LetterQueue;
  logger: Logger;
  limits: { perClient: RateLimit; perPerson: RateLimit; inboxSize: number; inboxMaxAgeDays: number; idempotencySeconds: number };
}

/** Request bodies larger than this are refused before parsing. */
export const MAX_BODY_BYTES = 16 * 1024;
export const MAX_TITLE = 120;
export const MAX_BODY = 2000;

type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;
interface NotifyState {
  client: Client;
  request: NotificationRequest;
  idempotencyKey?: string;
}

const invalidClient = (description: string) => Object.assign(
  new PluginError(401, 'invalid_client', description),
  { wwwAuthenticate: 'Basic realm="notify", charset="UTF-8"' },
);

/** Length as people count it, near enough: code points (an emoji is one, a surrogate pair is not two). */
const codePoints = (s: string) => [...s].length;
// Control characters (C0, DEL, C1); the body may keep newline and tab.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;
const CONTROL_BUT_NL_TAB = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u;

const text = (max: number, control: RegExp, controlMessage: string) => z.string()
  .min(1, 'must not be empty')
  .refine((s) => codePoints(s) <= max, `at most ${max} characters`)
  .refine((s) => !control.test(s), controlMessage);

/** SPEC "Notification request": all four required (the spec leaves it open), url optional. */
export const notificationRequest = z.object({
  sub: z.string().min(1, 'must not be empty').max(255, 'at most 255 characters'),
  category: z.string(),
  title: text(MAX_TITLE, CONTROL, 'must not contain control characters'),
  body: text(MAX_BODY, CONTROL_BUT_NL_TAB, 'must not contain control characters other than newline and tab'),
  url: z.string().max(2048, 'at most 2048 characters').optional(),
}).strict();
export type NotificationRequest = z.infer<typeof notificationRequest>;

/** One validate step: a ZodError becomes invalid_request naming the field. */
function validate(body: Record<string, unknown>): NotificationRequest {
  const result = notificationRequest.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') throw new errors.InvalidRequest(`unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`);
  const field = String(issue.path[0]); // every field is at the top level
  const message = issue.code === 'invalid_type' ? (body[field] === undefined ? 'is required' : 'must be a string') : issue.message;
  throw new errors.InvalidRequest(`${field}: ${message}`);
}

/** RFC 6749 section 2.3.1 with appendix B: client_id and secret are form-encoded inside Basic. */
function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
    return { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * POST /api/notify as a sequence of small steps, like oidc-provider's own
 * endpoints: authenticate the site, read and check the request, admit it on
 * the site's keys, deliver it on the person's keys, queue the letter.
 */
export function notifyRoutes(deps: NotifyDeps): Router {
  const { provider, store } = deps;
  const keys = notifyKeys(store.prefix, deps.sites);
  const siteThenPerson = siteAndPersonSteps(deps, keys);

  /** Only confidential clients: a registered secret method, a secret, not expired; compared in constant time by oidc-provider. */
  const authenticate: Middleware<NotifyState> = async (ctx, next) => {
    const credentials = basicCredentials(ctx.get('authorization'));
    if (!credentials) throw invalidClient('HTTP Basic client authentication is required');
    const client = await provider.Client.find(credentials.id).catch(() => undefined);
    if (!client || !['client_secret_basic', 'client_secret_post'].includes(client.clientAuthMethod ?? '') || !client.clientSecret) {
      // Unknown and public clients get the same answer as a wrong secret (client ids are not secret; secrets are).
      throw invalidClient('client authentication failed');
    }
    const matches = await (client as unknown as { compareClientSecret(s: string): Promise<boolean> }).compareClientSecret(credentials.secret);
    if (!matches) throw invalidClient('client authentication failed');
    try {
      (client as unknown as { checkClientSecretExpiration(m: string): void }).checkClientSecretExpiration('client secret expired');
    } catch {
      throw invalidClient('client secret expired');
    }
    ctx.state.client = client;
    await next();
  };

  const readRequest: Middleware<NotifyState> = async (ctx, next) => {
    if (!ctx.is('application/json')) throw new errors.InvalidRequest('content type must be application/json');
    const raw = await readBody(ctx as unknown as Context, MAX_BODY_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new errors.InvalidRequest('body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new errors.InvalidRequest('body must be a JSON object');
    const request = validate(body as Record<string, unknown>);
    if (!isCategory(request.category)) {
      throw new PluginError(400, 'unknown_category', 'category must be one of transactional, product, promotions');
    }
    if (request.url !== undefined && !urlAllowed(request.url, siteHosts(ctx.state.client))) {
      throw new PluginError(400, 'url_not_allowed', 'url must be an https address on the site’s own host');
    }
    const key = ctx.get('idempotency-key');
    if (key) {
      if (key.length > 255 || !/^[\x21-\x7E]+$/.test(key)) throw new errors.InvalidRequest('Idempotency-Key: at most 255 visible ASCII characters');
      ctx.state.idempotencyKey = key;
    }
    ctx.state.request = request;
    await next();
  };

  const tooMany = (ctx: Context, retryAfterMs: number, who: string) => {
    ctx.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    return new PluginError(429, 'rate_limited', `too many notifications ${who}; retry later`);
  };

  const deliver: Middleware<NotifyState> = async (ctx) => {
    const { client, request, idempotencyKey } = ctx.state;
    const clientId = client.clientId;
    // Without a key, a name of the site's slot that is never written (Cluster: one hash tag per script).
    const idempotencyKeyName = keys.idempotency(clientId, idempotencyKey ?? '');

    // 1 and 2. The site's slot (earlier answer, the site's rate, who the person is, the notification id), then the person's.
    const { reply, contact } = await siteThenPerson(request, clientId, idempotencyKeyName, idempotencyKey !== undefined);
    const [step, value, id, outcome, detail] = reply;
    if (step === 'replay') {
      ctx.status = 202;
      ctx.body = JSON.parse(value as string) as NotificationResult;
      return;
    }
    if (step === 'rate') throw tooMany(ctx as unknown as Context, Number(value), 'from this site');
    // Made only when thrown: an error's stack trace costs more than the rest of this step.
    const notConnected = () => new PluginError(403, 'not_connected', 'this person has not signed in to this site, or has revoked its access');
    const accountId = value as string;
    if (!accountId || outcome === 'not_connected') throw notConnected();
    if (outcome === 'rate') throw tooMany(ctx as unknown as Context, Number(detail), 'to this person');

    let result: NotificationResult;
    if (outcome === 'skip') result = { inApp: false, email: false, skipped: detail as SkipReason };
    else if (detail !== 'account_and_email') result = { inApp: true, email: false, skipped: null };
    else if (!contact?.email) result = { inApp: true, email: false, skipped: 'no_email' };
    else result = { inApp: true, email: true, skipped: null };

    // 3. The letter durably queued and the answer remembered, then the 202.
    await Promise.all([
      result.email ? deps.queue.add({ id: id!, accountId, clientId, category: request.category as Category, title: request.title, body: request.body, url: request.url ?? null }) : undefined,
      idempotencyKey ? store.run(commands.notifyAnswer(), [idempotencyKeyName], [JSON.stringify(result)]) : undefined,
    ]);
    ctx.status = 202;
    ctx.body = result;
  };

  const router = new Router<NotifyState>();
  router.post('/api/notify', jsonErrors(deps.logger), async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  }, authenticate, readRequest, deliver);
  return router;
}
