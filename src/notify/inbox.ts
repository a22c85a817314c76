/**
 * The person's inbox at the service (persistent data). Key layout, documented
 * in the README ("Redis keys"); all three share the account's hash tag.
 */
export function inboxKeys(prefix: string) {
  return {
    /** Sorted set: notification id scored by receivedAt (ms). */
    order: (accountId: string) => `${prefix}account:{${accountId}}:inbox`,
    /** Hash: notification id -> entry JSON. */
    entries: (accountId: string) => `${prefix}account:{${accountId}}:inbox:entries`,
    /** Sorted set of the unread ids, scored like the inbox. */
    unread: (accountId: string) => `${prefix}account:{${accountId}}:inbox:unread`,
  };
}

/** One message in the inbox: the site's words, verbatim. */
export interface InboxEntry {
  id: string;
  clientId: string;
  category: string;
  title: string;
  body: string;
  url: string | null;
  /** ms since the epoch. */
  receivedAt: number;
}
