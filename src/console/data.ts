import type Provider from 'oidc-provider';

import type { Category } from '../notify/categories.ts';
import type { Inbox } from '../notify/inbox.ts';
import { DEFAULT_SETTINGS, type Senders } from '../notify/senders.ts';
import type { ContactLookup } from '../options.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import type { ConsoleMessageView, ConsoleSenderView, ConsoleSiteView } from '../../views/console.ts';
import type { OrgMemberView } from '../../views/console-org.ts';

export interface ConsoleDataDeps {
  provider: Provider;
  sites: ConnectedSites;
  senders: Senders;
  inbox: Inbox;
  orgs: Organizations;
  contacts: ContactLookup;
}

/**
 * What the console shows is what its page takes (views/console.ts); times
 * are ms since the epoch, the JSON API turns them into ISO 8601.
 */
export type SiteView = ConsoleSiteView;
export type SenderView = ConsoleSenderView;
export type MessageView = ConsoleMessageView;
export type MemberView = OrgMemberView;

/** What the console shows, read once for both its page and its JSON API. */
export function consoleData(deps: ConsoleDataDeps) {
  const { provider } = deps;

  async function client(clientId: string) {
    const found = await provider.Client.find(clientId).catch(() => undefined);
    return {
      name: found?.clientName ?? clientId,
      uri: found?.clientUri ?? null,
      logoUri: found?.logoUri ?? null,
    };
  }

  return {
    async sites(accountId: string): Promise<SiteView[]> {
      const list = await deps.sites.list(accountId);
      return Promise.all(list.map(async (site) => ({ ...site, ...(await client(site.clientId)) })));
    },

    /** Every connected site that can write to the person, with the person's settings (defaults where unchanged). */
    async senders(accountId: string): Promise<SenderView[]> {
      const [list, settings] = await Promise.all([deps.sites.list(accountId), deps.senders.all(accountId)]);
      return Promise.all(list.filter((s) => s.status === 'connected').map(async (site) => {
        const { name, logoUri } = await client(site.clientId);
        const own = settings.get(site.clientId) ?? DEFAULT_SETTINGS;
        return { clientId: site.clientId, name, logoUri, muted: own.muted, categories: { ...own.categories } };
      }));
    },

    /** A page of the inbox; undefined for a cursor that is not one. */
    async inbox(accountId: string, cursor?: string) {
      const page = await deps.inbox.page(accountId, cursor);
      if (!page) return undefined;
      const names = new Map<string, Awaited<ReturnType<typeof client>>>();
      for (const item of page.items) if (!names.has(item.clientId)) names.set(item.clientId, await client(item.clientId));
      const items: MessageView[] = page.items.map((item) => ({
        id: item.id,
        clientId: item.clientId,
        siteName: names.get(item.clientId)!.name,
        logoUri: names.get(item.clientId)!.logoUri,
        category: item.category as Category,
        title: item.title,
        body: item.body,
        url: item.url,
        receivedAt: item.receivedAt,
        read: item.read,
      }));
      return { items, unread: page.unread, next: page.next };
    },

    async members(orgId: string): Promise<MemberView[]> {
      const members = await deps.orgs.members(orgId);
      return Promise.all(members.map(async (m) => ({
        accountId: m.accountId,
        email: (await deps.contacts(m.accountId))?.email ?? null,
        admin: m.admin,
        status: m.removedAt === undefined ? 'member' as const : 'removed' as const,
        ...(m.removedAt !== undefined ? { removedAt: m.removedAt } : {}),
      })));
    },
  };
}

export type ConsoleData = ReturnType<typeof consoleData>;
