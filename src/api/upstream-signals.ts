import Router from '@koa/router';
import type Provider from 'oidc-provider';

import type { Logger } from '../host.ts';
import { discardBody, readBody, readJson } from '../http/body.ts';
import { jsonErrors, PluginError } from '../http/errors.ts';
import { randomId } from '../random-pool.ts';
import type { UpstreamReceiver, LinkedAccount } from '../upstream-signals/receiver.ts';
import { KeysUnavailable } from '../upstream-signals/keys.ts';
import { subjectOf, type UpstreamSubject } from '../upstream-signals/subject.ts';
import { SetRefused } from '../upstream-signals/verify.ts';
import { bearer, type SsfState } from './ssf/authorize.ts';

/** Where upstreams push their SETs: `/upstream-signals/<upstream id>` (RFC 8935). */
export const UPSTREAM_SIGNALS_PATH = '/upstream-signals/:id';
/** draft-parecki-oauth-global-token-revocation's endpoint. */
export const GLOBAL_TOKEN_REVOCATION_PATH = '/global-token-revocation';

const SET_TYPES = /^application\/(secevent\+)?jwt$/i;

export interface UpstreamSignalRouteDeps {
  provider: Provider;
  receiver: UpstreamReceiver;
  logger: Logger;
  maxBodyBytes: number;
  globalTokenRevocation: {
    clients: string[];
    scope: string;
    /** The account of a subject the request names: an upstream's `iss_sub` (linked), an `opaque` account id, an `email`. */
    find(subject: GtrSubject): Promise<{ upstream?: { id: string; name: string }; found: LinkedAccount } | undefined>;
  };
}

/** A Global Token Revocation subject: RFC 9493's `iss_sub` and `email`, or `opaque` (the account's id here). */
export type GtrSubject = UpstreamSubject | { id: string };

function gtrSubject(body: unknown): GtrSubject | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  // -06 names it sub_id; earlier drafts `subject`.
  const id = (body as Record<string, unknown>).sub_id ?? (body as Record<string, unknown>).subject;
  const record = (typeof id === 'object' && id !== null ? id : {}) as Record<string, unknown>;
  if (record.format === 'opaque') return typeof record.id === 'string' && record.id.length > 0 && record.id.length <= 256 ? { id: record.id } : undefined;
  return subjectOf(id);
}

/**
 * The receiving endpoints: the push endpoint of each upstream (RFC 8935:
 * 202 accepted, 400 `{ err, description }` refused) and Global Token
 * Revocation (204; 400, 401, 403, 404 as the draft lists them).
 */
export function upstreamSignalRoutes(deps: UpstreamSignalRouteDeps): Router {
  const { receiver, logger } = deps;
  const router = new Router<SsfState>();

  router.post(UPSTREAM_SIGNALS_PATH, async (ctx) => {
    const refuse = async (status: number, err: string, description: string) => {
      await discardBody(ctx);
      ctx.status = status;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { err, description };
    };
    const id = String(ctx.params.id);
    if (!receiver.has(id)) return refuse(404, 'invalid_request', 'no such upstream');
    const type = ctx.get('content-type').split(';', 1)[0]!.trim();
    if (type && !SET_TYPES.test(type)) return refuse(400, 'invalid_request', 'content type must be application/secevent+jwt');
    let token: string;
    try {
      token = (await readBody(ctx, deps.maxBodyBytes)).trim();
    } catch (err) {
      return refuse(413, 'invalid_request', (err as Error).message);
    }
    try {
      await receiver.receive(id, token);
    } catch (err) {
      if (err instanceof SetRefused) {
        logger.warn('upstream SET refused', { upstream: id, err: err.err, description: err.message });
        return refuse(400, err.err, err.message);
      }
      if (err instanceof KeysUnavailable) {
        logger.warn('upstream SET not verified: its keys cannot be had', { upstream: id, reason: err.message });
        ctx.set('Retry-After', '60');
        return refuse(503, 'temporarily_unavailable', 'the upstream\'s keys cannot be fetched right now; try again');
      }
      throw err;
    }
    // An explicit empty body first: Koa turns an empty body's status to 204.
    ctx.body = null;
    ctx.status = 202;
  });

  const gtr = deps.globalTokenRevocation;
  router.post(GLOBAL_TOKEN_REVOCATION_PATH, jsonErrors(logger), bearer(deps.provider, [gtr.scope]), async (ctx) => {
    if (!gtr.clients.includes(ctx.state.clientId)) throw new PluginError('client_not_allowed', 'this client may not ask for global token revocation');
    const subject = gtrSubject(await readJson(ctx, 16 * 1024));
    if (!subject) throw new PluginError('invalid_request', 'sub_id must be a subject identifier of format iss_sub, email or opaque');
    const target = await gtr.find(subject);
    if (!target) throw new PluginError('user_not_found', 'no account for this subject');
    const requestId = `gtr-${randomId()}`;
    const client = await deps.provider.Client.find(ctx.state.clientId).catch(() => undefined);
    await receiver.revokeAll(target.upstream, target.found, requestId, target.upstream?.name ?? (typeof client?.clientName === 'string' ? client.clientName : ctx.state.clientId));
    logger.warn('global token revocation: every way in of the person ended', { clientId: ctx.state.clientId, accountId: target.found.accountId, id: requestId });
    ctx.status = 204;
  });

  return router;
}
