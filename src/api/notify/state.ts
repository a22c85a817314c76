import type Provider from 'oidc-provider';

import type { NotificationRequest } from '../../notify/notification.ts';

export type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/** What POST /api/notify's steps hand on: the site they authenticated, then its checked request. */
export interface NotifyState {
  client: Client;
  request: NotificationRequest;
  idempotencyKey?: string;
}
