import { hash } from 'node:crypto';

import type { ContactLookup } from '../host.ts';
import type { Organizations } from '../orgs/organizations.ts';
import { randomId } from '../random-pool.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import * as commands from '../store/commands.ts';
import { endedKeys } from '../store/ended-keys.ts';
import { decodeNotify, decodeNotifyPerson, decodeNotifySite, type NotifyPersonStep, type NotifySiteStep } from '../store/replies.ts';
import { keyAround, type Store } from '../store/store.ts';
import { DEFAULT_DELIVERY, type Category } from './categories.ts';
import { inboxKeys, type InboxEntry } from './inbox.ts';
import type { NotificationRequest, NotifyLimits } from './notification.ts';
import type { Senders } from './senders.ts';

/** Key layout of POST /api/notify; documented in docs/redis-keys.md ("Redis keys"). */
export function notifyKeys(p: string, sites: Pick<ConnectedSites, 'keys'>) {
  return {
    subjects: sites.keys.subjects,
    clientRate: (clientId: string) => `${p}site:{${clientId}}:notify-rate`,
    idempotency: (clientId: string, key: string) => `${p}site:{${clientId}}:idempotency:${hash('sha256', key, 'base64url')}`,
    personRate: (accountId: string, clientId: string) => `${p}account:{${accountId}}:notify-rate:${clientId}`,
    siteEnded: endedKeys(p).site,
    personEnded: endedKeys(p).person,
    ...inboxKeys(p),
  };
}

/** What steps 1 and 2 answer: the site step, and the person step once the site step found someone; the contact when a letter may go. */
export interface SiteAndPerson {
  site: NotifySiteStep;
  person?: NotifyPersonStep | undefined;
  contact?: Awaited<ReturnType<ContactLookup>>;
}

/**
 * Steps 1 and 2 of POST /api/notify, on the store: the site's part (earlier
 * answer, the site's rate, who the person is, the notification id), then the
 * person's (still connected, the person's rate, settings, inbox entry).
 */
export function siteAndPersonSteps(
  deps: { store: Store; sites: Pick<ConnectedSites, 'keys'>; senders: Pick<Senders, 'keys'>; orgs: Pick<Organizations, 'mayUse' | 'ofClient'>; contacts: ContactLookup; limits: NotifyLimits },
  keys: ReturnType<typeof notifyKeys>,
) {
  const { store, limits } = deps;
  // notify.lua builds the person's keys from the account id it finds: their text around the id. Every
  // person key starts alike (`<prefix>account:{<id>}`, the layout's hash tag); the tests read what it wrote.
  const [personKeyBefore] = keyAround(deps.sites.keys.sites);
  const after = (key: (accountId: string) => string) => keyAround(key)[1];
  const personKeysAfter = [after(deps.sites.keys.sites), after(deps.senders.keys.senders)];
  const inboxKeysAfter = [after(keys.order), after(keys.entries), after(keys.unread)];

  /**
   * Steps 1 and 2: on a single node one script (notify.lua) does both, on a
   * Cluster the site's slot and the person's slot take one script each. A
   * site of an organization takes the two scripts everywhere, with the
   * person's membership read between them: a removed member's inbox gets
   * nothing. The contact is looked up once the account is known, only when
   * a letter is to go on a single node, beside step 2 on a Cluster.
   */
  async function siteThenPerson(request: NotificationRequest, clientId: string, idempotencyKeyName: string, keyed: boolean): Promise<SiteAndPerson> {
    const category = request.category as Category;
    const now = Date.now();
    // The entry after its id (`"clientId":...}`): the id may be the one an Idempotency-Key holds.
    const entryTail = JSON.stringify({ clientId, category, title: request.title, body: request.body, url: request.url ?? null, receivedAt: now } satisfies Omit<InboxEntry, 'id'>).slice(1);
    const siteKeys = [keys.subjects(clientId), keys.clientRate(clientId), idempotencyKeyName, keys.siteEnded(clientId)];
    const siteArgs = [request.sub, limits.perClient.limit, limits.perClient.windowSeconds * 1000, keyed ? '1' : '0', randomId(), limits.idempotencySeconds * 1000];
    const personArgs = [limits.perPerson.limit, limits.perPerson.windowSeconds * 1000, limits.inboxSize, limits.inboxMaxAgeDays * 86_400_000];
    const ofOrganization = deps.orgs.ofClient(clientId).length > 0;

    if (store.singleNode && !ofOrganization) {
      const { site, person } = decodeNotify(await store.run(commands.notify(), siteKeys, [
        ...siteArgs, personKeyBefore, ...personKeysAfter, after((id) => keys.personRate(id, clientId)), ...inboxKeysAfter,
        clientId, category, DEFAULT_DELIVERY[category], entryTail, now, ...personArgs, after(keys.personEnded),
      ]));
      // The host's contact lookup only for a letter: it can no longer run beside step 2.
      const letter = site.step === 'ok' && person?.outcome === 'stored' && person.delivery === 'account_and_email';
      return { site, person, contact: letter ? await deps.contacts(site.accountId) : undefined };
    }
    const site = decodeNotifySite(await store.run(commands.notifyClient(), siteKeys, siteArgs));
    if (site.step !== 'ok' || !site.accountId) return { site };
    const { accountId, id, siteEnded } = site;
    if (ofOrganization && !(await deps.orgs.mayUse(accountId, clientId))) return { site, person: { outcome: 'not_connected' } };
    const [person, contact] = await Promise.all([
      store.run(
        commands.notifyAccount(),
        [deps.sites.keys.sites(accountId), deps.senders.keys.senders(accountId), keys.personRate(accountId, clientId), keys.order(accountId), keys.entries(accountId), keys.unread(accountId), keys.personEnded(accountId)],
        [clientId, category, DEFAULT_DELIVERY[category], id, `{"id":"${id}",${entryTail}`, now, ...personArgs, siteEnded],
      ).then(decodeNotifyPerson),
      deps.contacts(accountId),
    ]);
    return { site, person, contact };
  }

  return siteThenPerson;
}
