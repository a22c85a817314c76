import type { Middleware } from 'koa';

import { PluginError } from '../../http/errors.ts';
import { tooMany } from '../../http/rate-limit.ts';
import type { ContactLookup } from '../../host.ts';
import type { Category, SkipReason } from '../../notify/categories.ts';
import type { LetterQueue } from '../../notify/letters.ts';
import type { NotificationResult, NotifyLimits } from '../../notify/notification.ts';
import type { Senders } from '../../notify/senders.ts';
import { notifyKeys, siteAndPersonSteps } from '../../notify/site-and-person.ts';
import type { Organizations } from '../../orgs/organizations.ts';
import type { ConnectedSites } from '../../sites/connected-sites.ts';
import * as commands from '../../store/commands.ts';
import type { Store } from '../../store/store.ts';
import type { NotifyState } from './state.ts';

export interface DeliverDeps {
  store: Store;
  sites: ConnectedSites;
  orgs: Organizations;
  senders: Senders;
  contacts: ContactLookup;
  queue: LetterQueue;
  limits: NotifyLimits;
}


/**
 * Step 3: the message delivered. On the site's keys an earlier answer for
 * the same Idempotency-Key, the site's rate and who the person is; on the
 * person's keys whether the site may still write to them, their rate, their
 * settings and the inbox entry (src/notify/site-and-person.ts); then the
 * letter durably queued and the answer remembered, and the 202.
 */
export function deliver(deps: DeliverDeps): Middleware<NotifyState> {
  const { store } = deps;
  const keys = notifyKeys(store.prefix, deps.sites);
  const siteThenPerson = siteAndPersonSteps(deps, keys);

  return async (ctx) => {
    const { client, request, idempotencyKey } = ctx.state;
    const clientId = client.clientId;
    // Without a key, a name of the site's slot that is never written (Cluster: one hash tag per script).
    const idempotencyKeyName = keys.idempotency(clientId, idempotencyKey ?? '');

    const { site, person, contact } = await siteThenPerson(request, clientId, idempotencyKeyName, idempotencyKey !== undefined);
    if (site.step === 'replay') {
      ctx.status = 202;
      ctx.body = JSON.parse(site.answer) as NotificationResult;
      return;
    }
    if (site.step === 'rate') throw tooMany(ctx, site.retryAfterMs, 'too many notifications from this site; retry later');
    // Made only when thrown: an error's stack trace costs more than the rest of this step.
    const notConnected = () => new PluginError('not_connected', 'this person has not signed in to this site, or has revoked its access');
    if (!site.accountId || !person || person.outcome === 'not_connected') throw notConnected();
    if (person.outcome === 'rate') throw tooMany(ctx, person.retryAfterMs, 'too many notifications to this person; retry later');
    const { accountId, id } = site;

    let result: NotificationResult;
    if (person.outcome === 'skip') result = { inApp: false, email: false, skipped: person.reason as SkipReason };
    else if (person.delivery !== 'account_and_email') result = { inApp: true, email: false, skipped: null };
    else if (!contact?.email) result = { inApp: true, email: false, skipped: 'no_email' };
    else result = { inApp: true, email: true, skipped: null };

    await Promise.all([
      result.email ? deps.queue.add({ id, accountId, clientId, category: request.category as Category, title: request.title, body: request.body, url: request.url ?? null }) : undefined,
      idempotencyKey ? store.run(commands.notifyAnswer(), [idempotencyKeyName], [JSON.stringify(result)]) : undefined,
    ]);
    ctx.status = 202;
    ctx.body = result;
  };
}
