import type Provider from 'oidc-provider';

import type { Category } from '../notify/categories.ts';
import { negotiateLocale, type Locale } from '../i18n/index.ts';
import { theftNoticeText } from '../../views/letters/theft.ts';
import { securityNoticeText } from '../../views/letters/security.ts';
import type { Inbox } from '../notify/inbox.ts';
import { DEFAULT_SETTINGS, type Senders } from '../notify/senders.ts';
import type { ContactLookup } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import type { ConsoleMessageView, ConsoleSenderView, ConsoleSiteView } from '../../views/console.ts';
import type { OrgMemberView } from '../../views/console/org.ts';

export interface ConsoleDataDeps {
  provider: Provider;
  sites: ConnectedSites;
  senders: Senders;
  inbox: Inbox;
  orgs: Organizations;
  contacts: ContactLookup;
  serviceName: string;
  /** The host's sentence on how its people sign in, per language (the security notices' "what to check"). */
  signInCheck: (locale: Locale) => string | undefined;
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

  /** The name of the organization whose site this is and which removed the person; nothing for a site of no organization. */
  async function removedFrom(accountId: string, clientId: string): Promise<string | undefined> {
    const owners = deps.orgs.ofClient(clientId);
    if (owners.length === 0 || (await deps.orgs.mayUse(accountId, clientId))) return undefined;
    return owners[0]!.name;
  }

  return {
    /**
     * Every site the person signed in to. A site of an organization that
     * removed the person is `removed` (named by that organization), whatever
     * its stored status: it can neither sign them in nor write to them.
     */
    async sites(accountId: string): Promise<SiteView[]> {
      const list = await deps.sites.list(accountId);
      return Promise.all(list.map(async (site) => {
        const removedBy = await removedFrom(accountId, site.clientId);
        const view: SiteView = { ...site, ...(await client(site.clientId)) };
        if (removedBy) return { ...view, status: 'removed' as const, removedBy };
        // Ended by the service (endSiteAccess, endAccountAccess): no access, as after Remove access.
        if (site.endedByServiceAt !== undefined && site.status === 'connected') return { ...view, status: 'access_removed' as const, accessRemovedAt: site.endedByServiceAt };
        return view;
      }));
    },

    /** Every connected site that can write to the person, with the person's settings (defaults where unchanged). */
    async senders(accountId: string): Promise<SenderView[]> {
      const [list, settings] = await Promise.all([deps.sites.list(accountId), deps.senders.all(accountId)]);
      const usable = await Promise.all(list.map(async (s) => s.status === 'connected' && !(await removedFrom(accountId, s.clientId))));
      return Promise.all(list.filter((_s, i) => usable[i]).map(async (site) => {
        const { name, logoUri } = await client(site.clientId);
        const own = settings.get(site.clientId) ?? DEFAULT_SETTINGS;
        return { clientId: site.clientId, name, logoUri, muted: own.muted, categories: { ...own.categories } };
      }));
    },

    /**
     * A page of the inbox; undefined for a cursor that is not one. The
     * service's own notices are written in `locale` (else the person's).
     */
    async inbox(accountId: string, cursor?: string, locale?: Locale) {
      const page = await deps.inbox.page(accountId, cursor);
      if (!page) return undefined;
      const names = new Map<string, Awaited<ReturnType<typeof client>>>();
      for (const item of page.items) if (item.clientId && !names.has(item.clientId)) names.set(item.clientId, await client(item.clientId));
      const reader = page.items.some((item) => item.notice)
        ? locale ?? negotiateLocale({ preferred: (await deps.contacts(accountId))?.locale })
        : 'en';
      const items: MessageView[] = page.items.map((item) => {
        const site = names.get(item.clientId)!;
        const common = { id: item.id, clientId: item.clientId, url: item.url, receivedAt: item.receivedAt, read: item.read };
        if (item.notice && item.notice !== 'theft') {
          const text = securityNoticeText({ locale: reader, serviceName: deps.serviceName, kind: item.notice, details: item.details ?? {}, at: item.receivedAt, signInCheck: deps.signInCheck(reader) });
          return {
            ...common, from: 'service' as const, notice: item.notice, siteName: deps.serviceName, logoUri: null, category: 'security' as const,
            title: text.title, body: [text.what, '', ...text.then].join('\n'),
          };
        }
        if (item.notice === 'theft') {
          // From the service itself, about the site.
          const text = theftNoticeText({ locale: reader, serviceName: deps.serviceName, siteName: site.name, at: item.receivedAt, signInCheck: deps.signInCheck(reader) });
          return {
            ...common, from: 'service' as const, notice: 'theft', siteName: deps.serviceName, logoUri: null, category: 'security' as const,
            title: text.title, body: [text.what, text.done, '', text.check, ...text.checks.map((line) => `• ${line}`), '', text.fine].join('\n'),
          };
        }
        return { ...common, siteName: site.name, logoUri: site.logoUri, category: item.category as Category, title: item.title, body: item.body };
      });
      return { items, unread: page.unread, next: page.next };
    },

    /** The organizations the person is listed in (admin or member), and whether they were removed. */
    async memberships(accountId: string): Promise<{ id: string; name: string; admin: boolean; removed: boolean; removedAt?: number }[]> {
      const listed = deps.orgs.list().filter((org) => org.admins.includes(accountId) || org.members.includes(accountId));
      return Promise.all(listed.map(async (org) => {
        const me = (await deps.orgs.members(org.id)).find((m) => m.accountId === accountId);
        const removedAt = me?.removedAt;
        return { id: org.id, name: org.name, admin: org.admins.includes(accountId), removed: removedAt !== undefined, ...(removedAt !== undefined ? { removedAt } : {}) };
      }));
    },

    /** An organization's sites by name and address. */
    async orgSites(orgId: string): Promise<{ name: string; uri: string | null }[]> {
      return Promise.all((deps.orgs.get(orgId)?.clients ?? []).map(async (clientId) => {
        const { name, uri } = await client(clientId);
        return { name, uri };
      }));
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
