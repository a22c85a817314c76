import { z } from 'zod';

import type { ErrorName } from '../../http/error-codes.ts';
import { SKIP_REASONS } from '../../notify/categories.ts';
import type { NotificationResult } from '../../notify/notification.ts';

/**
 * What POST /api/notify answers, for the OpenAPI document (src/api/openapi/)
 * and the tests that check every answer against it. The route builds its
 * answers itself (./deliver.ts); these schemas say what it builds.
 */

/** The 202 (SPEC "Notification result"). */
export const notificationResult = z.object({
  inApp: z.boolean().meta({ description: 'The message is in the person\'s inbox on the service.' }),
  email: z.boolean().meta({ description: 'A letter is durably queued for the person\'s address.' }),
  skipped: z.enum(SKIP_REASONS).nullable()
    .meta({ description: 'Why it was not delivered in full: the person muted the site (`muted`), turned the category off (`category_off`), or has no address for letters (`no_email`); a skip is no error, and not to be retried.' }),
}).strict() satisfies z.ZodType<NotificationResult>;

/** Every error of the catalog (src/http/error-codes.ts) the route can answer, its own and the outer steps'. */
export const NOTIFY_ERRORS = [
  'invalid_request', 'unknown_category', 'url_not_allowed', 'invalid_client', 'not_connected', 'rate_limited',
  'server_error', 'temporarily_unavailable',
] as const satisfies readonly ErrorName[];
