import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { CATEGORIES, DEFAULT_DELIVERY, type Category, type Delivery } from './categories.ts';

/** A person's settings for one site that writes to them (the console's list of senders). */
export interface SenderSettings {
  muted: boolean;
  categories: Record<Category, Delivery>;
}

/** A change: any of the mute switch and the categories; `email_off` is unsubscribe (email stops, the account still gets it). */
export interface SenderPatch {
  muted?: boolean;
  categories?: Partial<Record<Category, Delivery | 'email_off'>>;
}

export const DEFAULT_SETTINGS: Readonly<SenderSettings> = Object.freeze({ muted: false, categories: { ...DEFAULT_DELIVERY } });

/** Key layout (persistent); documented in docs/redis-keys.md ("Redis keys"). */
export function senderKeys(prefix: string) {
  return { senders: (accountId: string) => `${prefix}account:{${accountId}}:senders` };
}

function parse(json: string | null | undefined): SenderSettings {
  if (!json) return { muted: false, categories: { ...DEFAULT_DELIVERY } };
  const raw = JSON.parse(json) as Partial<SenderSettings>;
  return { muted: raw.muted === true, categories: { ...DEFAULT_DELIVERY, ...raw.categories } };
}

/** Mute switches and category settings, per person and site. */
export function createSenders(store: Store) {
  const keys = senderKeys(store.prefix);
  return {
    keys,
    async get(accountId: string, clientId: string): Promise<SenderSettings> {
      const [json] = await store.hmget(keys.senders(accountId), [clientId]);
      return parse(json);
    },
    /** Stored settings of every site the person changed something for. */
    async all(accountId: string): Promise<Map<string, SenderSettings>> {
      const all = await store.hgetall(keys.senders(accountId));
      return new Map(Object.entries(all).map(([clientId, json]) => [clientId, parse(json)]));
    },
    async update(accountId: string, clientId: string, patch: SenderPatch): Promise<SenderSettings> {
      const muted = patch.muted === undefined ? '' : patch.muted ? '1' : '0';
      const out = await store.run(commands.senderUpdate(), [keys.senders(accountId)], [
        clientId, muted,
        ...CATEGORIES.map((c) => patch.categories?.[c] ?? ''),
        ...CATEGORIES.map((c) => DEFAULT_DELIVERY[c]),
      ]);
      return parse(out as string);
    },
  };
}

export type Senders = ReturnType<typeof createSenders>;
