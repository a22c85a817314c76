/**
 * Key layout of service sessions that end by their lifetime
 * (docs/session-expiry.md, docs/redis-keys.md): the person's expiring
 * sessions in the person's hash slot, and one index of the people who have
 * one, in a slot of its own.
 */
export function expiryKeys(prefix: string) {
  return {
    /** Hash: session uid -> JSON { exp, sites: { clientId: sid }, lease? }; expires a grace after its last session. */
    sessions: (accountId: string) => `${prefix}account:{${accountId}}:expiring`,
    /** Sorted set: accountId -> when the person's next session is due (ms); expires a grace after the latest. */
    people: `${prefix}{expiry}:people`,
  };
}

/** How long the records outlive a session's expiry: a sweeper stopped for less than this still tells its sites. */
export const EXPIRY_GRACE_MS = 24 * 60 * 60_000;
