import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';

/**
 * The person's inbox at the service (persistent data). Key layout, documented
 * in docs/redis-keys.md ("Redis keys"); all three share the account's hash tag.
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
  /**
   * The service's own security notice (`theft`: a sign-in at `clientId` was
   * used twice; `new_browser`, `passkey_added`, ...: see
   * security-notices.ts), written in the reader's language when shown;
   * `title` and `body` are empty then and `category` is `security`.
   */
  notice?: string;
  /**
   * What the notice names (a browser, a passkey's or a provider's name):
   * text, under the text rules when shown. A summary of new browsers also
   * counts them (`count`; `until` and `last` are ms since the epoch).
   */
  details?: { browser?: string | undefined; name?: string | undefined; count?: number; until?: number; last?: number };
}

/** One message as the console shows it. */
export interface InboxItem extends InboxEntry {
  read: boolean;
}

export interface InboxPage {
  items: InboxItem[];
  unread: number;
  /** Cursor of the next (older) page, or null at the end. */
  next: string | null;
}

/** A cursor is where the last page ended: its score and id, opaque to callers. */
function encodeCursor(score: string, id: string): string {
  return Buffer.from(JSON.stringify([score, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] | undefined {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && /^\d+$/.test(String(value[0])) && typeof value[1] === 'string') {
      return [String(value[0]), value[1]];
    }
  } catch {
    // not ours
  }
  return undefined;
}

/**
 * Reading and tidying the inbox; /api/notify writes it (notify_account.lua).
 * A page costs one round trip and O(log n + page) in Redis, whatever the
 * inbox holds.
 */
export function createInbox(store: Store, options: { maxAgeMs: number; pageSize?: number }) {
  const keys = inboxKeys(store.prefix);
  const triple = (accountId: string) => [keys.order(accountId), keys.entries(accountId), keys.unread(accountId)];

  return {
    keys,
    /** Newest first; `cursor` from a previous page's `next`. Undefined for a cursor that is not one. */
    async page(accountId: string, cursor?: string, size = options.pageSize ?? 20): Promise<InboxPage | undefined> {
      let start: [string, string] = ['+inf', ''];
      if (cursor) {
        const decoded = decodeCursor(cursor);
        if (!decoded) return undefined;
        start = decoded;
      }
      const reply = await store.run(commands.inboxPage(), triple(accountId), [start[0], start[1], Date.now() - options.maxAgeMs, size]) as (string | number)[];
      const items: InboxItem[] = [];
      let last: [string, string] | undefined;
      for (let i = 2; i + 3 < reply.length; i += 4) {
        const [id, score, json, unread] = [String(reply[i]), String(reply[i + 1]), String(reply[i + 2]), Number(reply[i + 3])];
        last = [score, id];
        if (!json) continue;
        items.push({ ...(JSON.parse(json) as InboxEntry), read: unread === 0 });
      }
      return { items, unread: Number(reply[0]), next: Number(reply[1]) === 1 && last ? encodeCursor(last[0], last[1]) : null };
    },
    /** False when the message is not (any more) in the inbox. */
    async markRead(accountId: string, id: string): Promise<boolean> {
      return (await store.run(commands.inboxChange(), triple(accountId), [id, 'read'])) === 1;
    },
    async remove(accountId: string, id: string): Promise<boolean> {
      return (await store.run(commands.inboxChange(), triple(accountId), [id, 'delete'])) === 1;
    },
  };
}

export type Inbox = ReturnType<typeof createInbox>;
