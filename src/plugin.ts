import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createStoreAdapter, type StoreAdapter } from '../adapters/store-adapter.ts';
import { consoleLogger } from './log.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { resolveOptions, type ContactLookup, type Logger, type ResolvedOptions, type SignoutNotifyOptions } from './options.ts';
import { randomBytes } from 'node:crypto';

import { withConsoleClient } from './console/console-client.ts';
import { consoleData } from './console/data.ts';
import { createPreferences, type Preferences } from './console/preferences.ts';
import { consoleRoutes } from './console/routes.ts';
import { createCsrf } from './http/csrf.ts';
import { createOrganizations, type Organizations } from './orgs/organizations.ts';
import { configureProvider } from './provider/configure.ts';
import { endSessionPreStep } from './provider/end-session.ts';
import { missingClientAuthIsInvalidClient } from './provider/missing-client-auth.ts';
import { batchTokenWrites } from './provider/token-batch.ts';
import { reportReplay, watchReuse } from './provider/reuse.ts';
import { createSiteAccess, type BlockResult, type RemoveMemberResult, type UnblockResult } from './sites/access.ts';
import { createConnectedSites, type ConnectedSite, type ConnectedSites } from './sites/connected-sites.ts';
import { recordSignIns } from './sites/record-sign-in.ts';
import { bullmqLetterQueue, memoryLetterQueue, type LetterQueue } from './notify/letters.ts';
import { notifyRoutes } from './notify/route.ts';
import { createInbox, type Inbox } from './notify/inbox.ts';
import { createSenders, type Senders } from './notify/senders.ts';
import { letterSender } from './notify/send-letter.ts';
import { unsubscribeRoutes } from './notify/unsubscribe-routes.ts';
import { createUnsubscribeTokens } from './notify/unsubscribe-token.ts';
import { MemoryStore, RedisStore, type Store } from './store/store.ts';

/** Where the plugin's own routes live (matched as @koa/router does: any case, trailing slash). */
const OWN_PATHS = /^\/(?:console|api\/notify|unsubscribe)(?:\/|$)/i;

export interface SignoutNotify {
  /** Validated options with defaults applied. */
  readonly options: ResolvedOptions;
  /** Where the plugin keeps its data; hosts may keep their own records in it too. */
  readonly store: Store;
  /** The oidc-provider adapter and grant revocation. */
  readonly adapter: StoreAdapter;
  /** Sends letters (SMTP, the host's transport, or the development outbox). */
  readonly mailer: Mailer;
  readonly logger: Logger;
  /** The sites each person signed in to (Connected sites). */
  readonly sites: ConnectedSites;
  readonly organizations: Organizations;
  /** Mute switches and category settings per person and site. */
  readonly senders: Senders;
  /** The person's inbox at the service. */
  readonly inbox: Inbox;
  /** What the person chose in the console (language). */
  readonly preferences: Preferences;
  /** The durable letter queue. */
  readonly letters: LetterQueue;
  /** Starts sending letters in this process (attach() does it unless `letters.worker` is false). */
  startLetterWorker(): void;
  /** Every site the person signed in to, most recently used first. */
  connectedSites(accountId: string): Promise<ConnectedSite[]>;
  /**
   * Block site: revokes the person's grants and tokens at the site, sends it
   * back-channel logout, and refuses it tokens until unblocked. Needs attach().
   */
  blockSite(accountId: string, clientId: string): Promise<BlockResult>;
  unblockSite(accountId: string, clientId: string): Promise<UnblockResult>;
  /**
   * An organization admin removes a member: the member's grants at the
   * organization's sites are revoked, back-channel logout is sent, and later
   * sign-ins and refreshes there are refused. Authorization is the caller's
   * job (the console route checks the admin).
   */
  removeMember(orgId: string, accountId: string): Promise<RemoveMemberResult>;
  /** Returns the host's configuration with the plugin's settings merged in. */
  configure<T extends Configuration>(host: T): T;
  /** Mounts the plugin's routes and event handlers on a provider built from configure(). */
  attach(provider: Provider): void;
  /** Stops timers and transports the plugin created (not the host's Redis client). */
  close(): Promise<void>;
}

/**
 * Creates the plugin. Nothing happens until this is called: importing the
 * package has no side effects.
 */
export function createSignoutNotify(input: SignoutNotifyOptions): SignoutNotify {
  const options = resolveOptions(input);
  const logger = options.logger ?? consoleLogger;

  let store: Store;
  if (options.redis) {
    store = new RedisStore(options.redis, options.keyPrefix);
  } else {
    logger.warn('oidc-signout-notify: no Redis client given, using the EMBEDDED IN-MEMORY STORE: every session, token, account and message is lost on restart. Set a Redis client for anything but development.');
    store = new MemoryStore(options.keyPrefix);
  }

  const storeAdapter = createStoreAdapter(store, {
    clockTolerance: options.clockTolerance,
    defaultTtl: options.defaultTtl,
    onReplay: (event) => reportReplay(logger, provider, event),
  });
  // The console's own client is answered by the adapter (its redirect URI needs the issuer).
  const adapter: StoreAdapter = { ...storeAdapter, factory: withConsoleClient(storeAdapter.factory, () => provider?.issuer, options.serviceName) };

  const mailer = createMailer(options.mail);
  let provider: Provider | undefined;
  const sites = createConnectedSites(store);
  const organizations = createOrganizations(store, options.organizations);
  const access = createSiteAccess({ sites, orgs: organizations, adapter, store, logger, provider: () => provider });
  // Form tokens and unsubscribe links are keyed by the provider's cookie
  // keys (newest first), so every instance agrees and keys rotate together.
  const fallbackSecret = randomBytes(32);
  const secrets = (): (string | Buffer)[] => {
    const keys = provider?.keys as unknown;
    return Array.isArray(keys) && keys.length > 0 ? keys.map(String) : [fallbackSecret];
  };
  const csrf = createCsrf(() => secrets()[0]!);
  const senders = createSenders(store);
  const inbox = createInbox(store, { maxAgeMs: options.notify.inboxMaxAgeDays * 86_400_000 });
  const preferences = createPreferences(store);
  // The person's language chosen in the console wins over the host's.
  const contacts: ContactLookup = async (accountId) => {
    const [contact, locale] = await Promise.all([options.contacts(accountId), preferences.locale(accountId)]);
    if (!contact && !locale) return undefined;
    return { ...contact, locale: locale ?? contact?.locale };
  };
  const tokens = createUnsubscribeTokens(secrets);
  const letters = options.redis
    ? bullmqLetterQueue(options.redis, options.keyPrefix, options.letters, logger)
    : memoryLetterQueue(options.letters, logger);
  const sendLetter = letterSender({
    store, sites, orgs: organizations, senders, contacts, mailer, tokens,
    provider: () => provider, serviceName: options.serviceName, logger, holdMs: options.letters.stalledIntervalMs,
  });
  const startLetterWorker = () => letters.startWorker(sendLetter);

  return {
    options,
    store,
    adapter,
    mailer,
    logger,
    sites,
    organizations,
    senders,
    inbox,
    preferences,
    letters,
    startLetterWorker,
    connectedSites: (accountId) => sites.list(accountId),
    blockSite: access.blockSite,
    unblockSite: access.unblockSite,
    removeMember: access.removeMember,
    configure: (host) => configureProvider(host, {
      adapter,
      logger,
      allowPrivateFetchHosts: options.allowPrivateFetchHosts,
      serviceName: options.serviceName,
      contacts,
      sites,
      orgs: organizations,
    }),
    attach(target) {
      provider = target;
      target.use(batchTokenWrites(target, adapter));
      target.use(missingClientAuthIsInvalidClient(target));
      target.use(endSessionPreStep(target));
      target.use(recordSignIns(target, sites, options.defaultTtl));
      const data = consoleData({ provider: target, sites, senders, inbox, orgs: organizations, contacts });
      // The plugin's own routes, as consoleRoutes nests its own. One path check
      // in front, so the provider's requests skip the routers' matching.
      const own = new Router();
      own.use(
        consoleRoutes({
          provider: target, data, sites, senders, inbox, orgs: organizations, access, csrf, preferences,
          contacts, serviceName: options.serviceName, logger,
        }).routes(),
        notifyRoutes({
          provider: target, store, sites, orgs: organizations, senders, contacts: options.contacts,
          queue: letters, logger, limits: options.notify,
        }).routes(),
        unsubscribeRoutes({ provider: target, senders, tokens, contacts, serviceName: options.serviceName }).routes(),
      );
      const ownRoutes = own.routes() as Middleware;
      target.use((ctx, next) => (OWN_PATHS.test(ctx.path) ? ownRoutes(ctx, next) : next()));
      watchReuse(target, logger);
      if (options.letters.worker) startLetterWorker();
    },
    async close() {
      await letters.close();
      await mailer.close();
      await store.close();
    },
  };
}
