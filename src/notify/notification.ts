import type { SkipReason } from './categories.ts';

/** SPEC "Limits": a title and a body as people count characters (code points). */
export const MAX_TITLE = 120;
export const MAX_BODY = 2000;

/** A site's message to one of its people, as checked at the door (SPEC "Notification request"). */
export interface NotificationRequest {
  sub: string;
  category: string;
  title: string;
  body: string;
  url?: string | undefined;
}

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

/** The plugin's `notify` options: rate limits, inbox retention, the Idempotency-Key's life. */
export interface NotifyLimits {
  perClient: RateLimit;
  perPerson: RateLimit;
  inboxSize: number;
  inboxMaxAgeDays: number;
  idempotencySeconds: number;
}
