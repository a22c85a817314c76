import { EventEmitter } from 'node:events';

import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createStoreAdapter, type StoreAdapter } from '../adapters/store-adapter.ts';
import { consoleLogger } from './log.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import type { ContactLookup, Logger } from './host.ts';
import { resolveOptions, type ResolvedOptions, type SignoutNotifyOptions } from './options.ts';
import { randomBytes } from 'node:crypto';
import { negotiateLocale } from './i18n/index.ts';
import { LETTER_EVENT, NOTIFIED_EVENT, REFRESH_REPLAYED_EVENT, UNAVAILABLE_EVENT, type EmitEvent, type SignoutNotifyEventName, type SignoutNotifyEvents } from './events.ts';
import type { NotificationResult } from './notify/notification.ts';

import { withConsoleClient } from './provider/console-client.ts';
import { consoleData } from './console/data.ts';
import { createPreferences, type Preferences } from './preferences.ts';
import { consoleRoutes } from './console/routes.ts';
import { createCsrf } from './http/csrf.ts';
import { notFoundPages } from './http/error-page.ts';
import { createOrganizations, type Organizations } from './orgs/organizations.ts';
import { codeFlowDiscovery } from './provider/code-flow-discovery.ts';
import { allowedResponseModes, configureProvider } from './provider/configure.ts';
import { endSessionConfirmPostStep, endSessionPreStep } from './provider/end-session.ts';
import { routeMatcher } from './provider/paths.ts';
import { missingClientAuthIsInvalidClient } from './provider/missing-client-auth.ts';
import { batchTokenWrites } from './provider/token-batch.ts';
import { createTheft } from './theft/theft.ts';
import { watchReuse } from './theft/watch-reuse.ts';
import { warnOfInsecureCookies } from './provider/secure-cookies.ts';
import { unavailableAs503 } from './http/unavailable.ts';
import { createSiteAccess, type BlockResult, type RemoveAccessResult, type RemoveMemberResult, type UnblockResult } from './sites/access.ts';
import { createLastUsed } from './sites/last-used.ts';
import { recordSessions } from './provider/record-session.ts';
import { createSessions, type Sessions } from './sessions/sessions.ts';
import { createConnectedSites, type ConnectedSite, type ConnectedSites } from './sites/connected-sites.ts';
import { recordSignIns } from './provider/record-sign-in.ts';
import { bullmqLetterQueue, memoryLetterQueue, type LetterQueue } from './notify/letters.ts';
import { notifyRoutes } from './api/notify.ts';
import { createInbox, type Inbox } from './notify/inbox.ts';
import { createSenders, type Senders } from './notify/senders.ts';
import { createTheftNotices } from './theft/notice.ts';
import { letterSender } from './notify/send-letter.ts';
import { unsubscribeRoutes } from './api/unsubscribe.ts';
import { createUnsubscribeTokens } from './notify/unsubscribe-token.ts';
import { MemoryStore, RedisStore, type Store } from './store/store.ts';

/** An issuer a development machine runs on: its letters may go to the log. */
function onLoopback(issuer: string): boolean {
  const host = new URL(issuer).hostname;
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]';
}

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
  /** The person's service sessions: where they are signed in. */
  readonly sessions: Sessions;
  readonly organizations: Organizations;
  /** Mute switches and category settings per person and site. */
  readonly senders: Senders;
  /** The person's inbox at the service. */
  readonly inbox: Inbox;
  /** What the person chose in the console (language). */
  readonly preferences: Preferences;
  /** The durable letter queue. */
  readonly letters: LetterQueue;
  /**
   * Starts sending letters in this process (attach() does it unless
   * `letters.worker` is false). A worker process that never attaches passes
   * its provider, built with the service's configuration: letters take the
   * issuer, the sites' names and the cookie keys (unsubscribe links) from it.
   * `runLetterWorker` from `oidc-signout-notify/worker` wraps this with
   * graceful shutdown.
   */
  startLetterWorker(provider?: Provider): void;
  /** Stops sending letters in this process once the letters in hand are sent; the rest wait for another worker. */
  stopLetterWorker(): Promise<void>;
  /**
   * Listens to one of the plugin's events (typed; see SignoutNotifyEvents).
   * The same events reach `provider.on(...)` once attached. Returns a
   * function that removes the listener.
   */
  on<E extends SignoutNotifyEventName>(event: E, listener: SignoutNotifyEvents[E]): () => void;
  /** Every site the person signed in to, most recently used first. */
  connectedSites(accountId: string): Promise<ConnectedSite[]>;
  /**
   * Block site: revokes the person's grants and tokens at the site, sends it
   * back-channel logout, and refuses it tokens until unblocked. Needs attach().
   */
  blockSite(accountId: string, clientId: string): Promise<BlockResult>;
  unblockSite(accountId: string, clientId: string): Promise<UnblockResult>;
  /**
   * Remove access: revokes the person's grants and tokens at the site and
   * sends it back-channel logout, without blocking it: the next sign-in there
   * asks for consent again. Needs attach() for back-channel logout.
   */
  removeAccess(accountId: string, clientId: string): Promise<RemoveAccessResult>;
  /** Remove access from every connected site; returns the client ids whose access ended. */
  removeAllAccess(accountId: string): Promise<string[]>;
  /**
   * Ends the site's access for every person at once (its secret leaked, the
   * site was compromised): every grant of the site issued up to now is over,
   * with every token of it (introspection `active: false`, refresh
   * `invalid_grant`, the reuse leeway included). One write, whatever the
   * number of grants: a mark the token reads compare with. The site gets no
   * back-channel logout (it may be the attacker's); each person's console
   * shows it as ended by the service, and their next sign-in there asks for
   * consent again. Returns when it took effect (ms since the epoch; grants
   * issued in that second end too).
   */
  endSiteAccess(clientId: string): Promise<number>;
  /**
   * Ends every grant and every service session of one person, at every site,
   * at once (the account was taken over, or is being closed): their tokens
   * die with them, each site the person had a session at gets back-channel
   * logout, and the next sign-in anywhere starts afresh. Returns when it took
   * effect (ms since the epoch).
   */
  endAccountAccess(accountId: string): Promise<number>;
  /**
   * An organization admin removes a member: the member's grants at the
   * organization's sites are revoked, back-channel logout is sent, and later
   * sign-ins and refreshes there are refused. Authorization is the caller's
   * job (the console route checks the admin).
   */
  removeMember(orgId: string, accountId: string): Promise<RemoveMemberResult>;
  /** Returns the host's configuration with the plugin's settings merged in. */
  configure<T extends Configuration>(host: T): T;
  /**
   * Mounts the plugin's routes and event handlers on a provider built from
   * configure(). Throws a TypeError when letters would go to the log (no
   * transport, no smtpUrl) for an issuer that is not on loopback, unless
   * `mail.outbox` is `'log'`.
   */
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
    store = new RedisStore(options.redis, options.keyPrefix, { timeoutMs: options.redisTimeoutMs });
  } else {
    logger.warn('oidc-signout-notify: no Redis client given, using the EMBEDDED IN-MEMORY STORE: every session, token, account and message is lost on restart. Set a Redis client for anything but development.');
    store = new MemoryStore(options.keyPrefix);
  }

  // A listener that throws must not break the request that found the theft.
  const events = new EventEmitter();
  const emit: EmitEvent = (name, ...args) => {
    for (const target of [events, provider]) {
      try {
        target?.emit(name, ...args);
      } catch (err) {
        logger.error('an event listener threw', { event: name, reason: (err as Error).message });
      }
    }
  };
  const storeAdapter = createStoreAdapter(store, {
    clockTolerance: options.clockTolerance,
    defaultTtl: options.defaultTtl,
    refreshReuseLeeway: options.refreshReuseLeeway,
    publicClientLeeway: options.publicClientLeeway,
    onReplay: (event, ctx) => theft.report(event, ctx),
    onAnswerAgain: (event) => {
      logger.info('refresh answer given again within the reuse leeway', { ...event });
      emit(REFRESH_REPLAYED_EVENT, event);
    },
  });
  // The console's own client is answered by the adapter (its redirect URI needs the issuer).
  const adapter: StoreAdapter = { ...storeAdapter, factory: withConsoleClient(storeAdapter.factory, () => provider?.issuer, options.serviceName) };

  const mailer = createMailer(options.mail);
  let provider: Provider | undefined;
  // A worker process may pass its provider without attaching it (letters only).
  let letterProvider: Provider | undefined;
  // What configure() made, for the steps attach() mounts (discovery's response modes).
  let configured: Configuration | undefined;
  const sites = createConnectedSites(store);
  const organizations = createOrganizations(store, options.organizations);
  const access = createSiteAccess({ sites, orgs: organizations, adapter, store, logger, provider: () => provider });
  const lastUsed = createLastUsed(sites, { intervalSeconds: options.lastUsedInterval, logger, alongside: adapter.alongside });
  const sessions = createSessions({ store, adapter, sites, access, logger, provider: () => provider });
  // Form tokens and unsubscribe links are keyed by the provider's cookie
  // keys (newest first), so every instance agrees and keys rotate together.
  const fallbackSecret = randomBytes(32);
  const secrets = (): (string | Buffer)[] => {
    const keys = (provider ?? letterProvider)?.keys as unknown;
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
  const onLetter = (event: Parameters<SignoutNotifyEvents[typeof LETTER_EVENT]>[0]) => emit(LETTER_EVENT, event);
  const letters = options.redis
    ? bullmqLetterQueue(options.redis, options.keyPrefix, options.letters, logger, onLetter)
    : memoryLetterQueue(options.letters, logger, onLetter);
  // Theft: logged, emitted, and the person told (README "Told when a sign-in was stolen").
  const theftNotice = createTheftNotices({
    store, queue: letters, contacts, access, logger, windowMs: options.theftNotice.windowSeconds * 1000,
    inbox: { size: options.notify.inboxSize, maxAgeMs: options.notify.inboxMaxAgeDays * 86_400_000 },
  });
  const theft = createTheft({ logger, emit, notice: theftNotice });
  const sendLetter = letterSender({
    store, sites, orgs: organizations, senders, contacts, mailer, tokens,
    provider: () => provider ?? letterProvider, serviceName: options.serviceName, logger, holdMs: options.letters.stalledIntervalMs,
  });
  // Letters printed to the log leak their links (and a host's sign-in codes)
  // wherever logs go: only on loopback, or when the host says so.
  const checkMail = (issuer: string) => {
    if (!mailer.development || onLoopback(issuer)) return;
    if (options.mail.outbox !== 'log') {
      throw new TypeError(`oidc-signout-notify: no mail transport for ${issuer}: set mail.transport or mail.smtpUrl, or mail.outbox: 'log' to print letters to the log`);
    }
    logger.warn(`oidc-signout-notify: LETTERS ARE PRINTED TO THE LOG (mail.outbox: 'log') for ${issuer}: unsubscribe links and any sign-in codes are readable by whoever reads the logs. Configure SMTP for real use.`);
  };
  const startLetterWorker = (from?: Provider) => {
    if (from) {
      checkMail(from.issuer);
      letterProvider = from;
    }
    if (!provider && !letterProvider) {
      throw new TypeError('oidc-signout-notify: startLetterWorker(provider) needs the provider (built with the service\'s configuration) when the plugin is not attached');
    }
    letters.startWorker(sendLetter);
  };

  return {
    options,
    store,
    adapter,
    mailer,
    logger,
    sites,
    sessions,
    organizations,
    senders,
    inbox,
    preferences,
    letters,
    startLetterWorker,
    stopLetterWorker: () => letters.stopWorker(),
    on(event, listener) {
      events.on(event, listener);
      return () => { events.off(event, listener); };
    },
    connectedSites: (accountId) => sites.list(accountId),
    blockSite: access.blockSite,
    unblockSite: access.unblockSite,
    removeAccess: access.removeAccess,
    removeAllAccess: access.removeAllAccess,
    removeMember: access.removeMember,
    async endSiteAccess(clientId) {
      const at = await adapter.endSiteGrants(clientId);
      logger.warn('every grant of the site ended by the service', { clientId });
      return at * 1000;
    },
    async endAccountAccess(accountId) {
      const at = await adapter.endAccountGrants(accountId);
      await sessions.endAll(accountId);
      logger.warn('every grant and session of the person ended by the service');
      return at * 1000;
    },
    configure: (host) => (configured = configureProvider(host, {
      adapter,
      logger,
      allowPrivateFetchHosts: options.allowPrivateFetchHosts,
      serviceName: options.serviceName,
      contacts,
      sites,
      orgs: organizations,
      lastUsed,
    })),
    attach(target) {
      checkMail(target.issuer);
      warnOfInsecureCookies(target, logger);
      provider = target;
      // Outermost of all steps, routes the host mounted before attach() included
      // (Koa composes provider.middleware when the server starts).
      const outermost = unavailableAs503(options.serviceName, (event) => emit(UNAVAILABLE_EVENT, event));
      target.middleware.unshift(outermost as (typeof target.middleware)[number]);
      target.use(notFoundPages(options.serviceName, () => target.issuer,
        routeMatcher(target, ['token', 'introspection', 'revocation', 'userinfo', 'jwks', 'pushed_authorization_request'])));
      target.use(batchTokenWrites(target, adapter, theft.pending));
      target.use(missingClientAuthIsInvalidClient(target));
      target.use(codeFlowDiscovery(allowedResponseModes(configured ?? {})));
      target.use(endSessionPreStep(target, options.serviceName));
      target.use(endSessionConfirmPostStep(target));
      target.use(recordSignIns(target, sites, options.defaultTtl, async (ctx, accountId) => {
        // The language the person signed in with becomes theirs where the host knows none.
        if ((await options.contacts(accountId))?.locale) return;
        const uiLocales = ctx.oidc.params?.ui_locales;
        await preferences.setFirstLocale(accountId, negotiateLocale({ uiLocales: typeof uiLocales === 'string' ? uiLocales : undefined, acceptLanguage: ctx.get('accept-language') }));
      }));
      target.use(recordSessions(target, sessions, logger));
      const data = consoleData({ provider: target, sites, senders, inbox, orgs: organizations, contacts, serviceName: options.serviceName });
      // The plugin's own routes, as consoleRoutes nests its own. One path check
      // in front, so the provider's requests skip the routers' matching.
      const own = new Router();
      // Notify outcomes for the host's metrics, as the site got them.
      own.post('/api/notify', async (ctx, next) => {
        await next();
        if (ctx.status === 202) emit(NOTIFIED_EVENT, { clientId: (ctx.state as { client: { clientId: string } }).client.clientId, result: ctx.body as NotificationResult });
      });
      own.use(
        consoleRoutes({
          provider: target, data, sites, senders, inbox, orgs: organizations, access, csrf, preferences,
          contacts, serviceName: options.serviceName, logger, sections: options.console.sections, sessions,
        }).routes(),
        notifyRoutes({
          provider: target, store, sites, orgs: organizations, senders, contacts: options.contacts,
          queue: letters, logger, limits: options.notify,
        }).routes(),
        unsubscribeRoutes({ provider: target, senders, tokens, contacts, serviceName: options.serviceName }).routes(),
      );
      const ownRoutes = own.routes() as Middleware;
      target.use((ctx, next) => (OWN_PATHS.test(ctx.path) ? ownRoutes(ctx, next) : next()));
      watchReuse(target, theft.report, (ctx) => adapter.consumedSource(ctx));
      if (options.letters.worker) startLetterWorker();
    },
    async close() {
      await letters.close();
      await mailer.close();
      await store.close();
    },
  };
}
