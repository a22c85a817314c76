/** The spec's categories of messages a site may send (SPEC "Categories"). */
export const CATEGORIES = ['transactional', 'product', 'promotions'] as const;
export type Category = typeof CATEGORIES[number];

/** How a person wants a category delivered: in the account and by email, in the account only, or not at all. */
export const DELIVERIES = ['account_and_email', 'account', 'off'] as const;
export type Delivery = typeof DELIVERIES[number];

/** Why a notification was not delivered in full (the result's `skipped`). */
export const SKIP_REASONS = ['muted', 'category_off', 'no_email'] as const;
export type SkipReason = typeof SKIP_REASONS[number];

/** Defaults of the spec's category table, until the person changes them. */
export const DEFAULT_DELIVERY: Readonly<Record<Category, Delivery>> = {
  transactional: 'account_and_email',
  product: 'account',
  promotions: 'off',
};

export function isCategory(value: unknown): value is Category {
  return typeof value === 'string' && (CATEGORIES as readonly string[]).includes(value);
}
