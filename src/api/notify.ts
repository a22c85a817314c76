import Router from '@koa/router';
import type Provider from 'oidc-provider';

import { jsonErrors } from '../http/errors.ts';
import type { Logger } from '../host.ts';
import type { NotificationResult } from '../notify/notification.ts';
import { authenticateSite } from './notify/authenticate-site.ts';
import { deliver, type DeliverDeps } from './notify/deliver.ts';
import { readRequest } from './notify/read-request.ts';
import type { NotifyState } from './notify/state.ts';

export interface NotifyDeps extends DeliverDeps {
  provider: Provider;
  logger: Logger;
  /** Told of each 202, as the site got it (the host's metrics). */
  notified?: (clientId: string, result: NotificationResult) => void;
}

/**
 * POST /api/notify (SPEC "Send a notification"), as oidc-provider builds its
 * endpoints: small steps, each in a file of its own, in this order.
 */
export function notifyRoutes(deps: NotifyDeps): Router {
  const router = new Router<NotifyState>();
  router.post(
    '/api/notify',
    jsonErrors(deps.logger),
    async (ctx, next) => {
      ctx.set('Cache-Control', 'no-store');
      await next();
      if (ctx.status === 202) deps.notified?.(ctx.state.client.clientId, ctx.body as NotificationResult);
    },
    authenticateSite(deps.provider), // 1. the site, by HTTP Basic; confidential sites only
    readRequest, //                      2. the JSON request, its fields, category, url, Idempotency-Key
    deliver(deps), //                    3. the site's keys, the person's keys, the letter queued, the 202
  );
  return router;
}
