import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';

import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

type FindAccount = NonNullable<Configuration['findAccount']>;

import { CLIENT_CREDENTIALS_LENGTH } from '../adapters/keys.ts';
import { createStoreAdapter, type StoreAdapter } from '../adapters/store-adapter.ts';
import { createAdoption } from './adopt/adoption.ts';
import { BACKCHANNEL_LOGOUT_EVENT, LETTER_EVENT, REFRESH_REPLAYED_EVENT, SHARED_SIGNALS_EVENT, type EmitEvent } from './events.ts';
import type { ContactLookup, Logger } from './host.ts';
import { createCsrf } from './http/csrf.ts';
import { consoleLogger } from './log.ts';
import { createMailer } from './mail/mailer.ts';
import { createBackchannelLogout } from './notify/backchannel-logout.ts';
import { createInbox } from './notify/inbox.ts';
import { bullmqLogoutQueue, memoryLogoutQueue } from './notify/logout-queue.ts';
import { createSecurityNotices, signInCheckFor } from './notify/security-notices.ts';
import { bullmqLetterQueue, memoryLetterQueue } from './notify/letters.ts';
import { letterSender } from './notify/send-letter.ts';
import { createSenders } from './notify/senders.ts';
import { createUnsubscribeTokens } from './notify/unsubscribe-token.ts';
import type { ResolvedOptions } from './options.ts';
import { createOrganizations } from './orgs/organizations.ts';
import { createPreferences } from './preferences.ts';
import { recentSignIns } from './console/recent-sign-in.ts';
import { withConsoleClient } from './provider/console-client.ts';
import { createBrowsers } from './sessions/browsers.ts';
import { createSessions } from './sessions/sessions.ts';
import { createSiteAccess } from './sites/access.ts';
import { createConnectedSites } from './sites/connected-sites.ts';
import { createAccountDeletion } from './sites/delete-account.ts';
import { createLastUsed } from './sites/last-used.ts';
import { MemoryStore, RedisStore, type Store } from './store/store.ts';
import { createTheftNotices } from './theft/notice.ts';
import { createTheft, type Theft } from './theft/theft.ts';
import { createTell } from './tell/tell.ts';
import { subjectFor } from './provider/subject.ts';
import { bullmqSsfQueue, memorySsfQueue } from './ssf/set-queue.ts';
import { createSessionExpiry } from './sessions/expiry.ts';
import { bullmqExpirySweeper, memoryExpirySweeper } from './sessions/expiry-sweeper.ts';
import { setSigner, type Jwks } from './ssf/sign.ts';
import { createStreams } from './ssf/streams.ts';
import { createTransmitter } from './ssf/transmitter.ts';
import { createUpstreamConnect } from './upstream-signals/connect.ts';
import { createUpstreamPoller } from './upstream-signals/poll.ts';
import { createUpstreamReceiver } from './upstream-signals/receiver.ts';

/**
 * The provider the plugin serves, once known: attach() sets `attached`, a
 * worker process `forLetters`; configure() the account lookup it made.
 */
export interface Providers {
  attached?: Provider | undefined;
  forLetters?: Provider | undefined;
  findAccount?: FindAccount | undefined;
  /** The signing keys configure() was given (Shared Signals signs SETs with them). */
  jwks?: Jwks | undefined;
}

/** Bounds of what Shared Signals keeps per site (docs/shared-signals.md). */
export const SSF_LIMITS = {
  heldMax: 1000,
  heldTtlMs: 7 * 86_400_000,
  pollMax: 1000,
  pollTtlMs: 7 * 86_400_000,
  pushTimeoutMs: 10_000,
};

/**
 * The plugin's parts, made once from the options and wired to each other:
 * the store and its adapter, what the plugin keeps for each person, the
 * letter queue, theft handling, and the events it tells the host of.
 */
export function createParts(options: ResolvedOptions, providers: Providers) {
  const logger: Logger = options.logger ?? consoleLogger;
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
    for (const target of [events, providers.attached]) {
      try {
        target?.emit(name, ...args);
      } catch (err) {
        logger.error('an event listener threw', { event: name, reason: (err as Error).message });
      }
    }
  };

  /** The provider (attached, or a worker's) that signs and knows the clients. */
  const signingProvider = () => providers.attached ?? providers.forLetters;
  /** The `sub` a person has at a site, as in its ID tokens (pairwise included); `via` a provider of the caller's (the import's). */
  const subjectAt = async (accountId: string, clientId: string, via?: Provider) => {
    const provider = via ?? signingProvider();
    const client = await provider?.Client.find(clientId).catch(() => undefined);
    return provider && client ? subjectFor(provider, undefined, accountId, client) : undefined;
  };
  // Theft is found inside the adapter it ends grants through: the one late binding (set below, once the parts it needs exist).
  let theft: Theft | undefined;
  const storeAdapter = createStoreAdapter(store, {
    // configure() makes every client-credentials token this long (Shared Signals receivers use them).
    clientCredentialsLength: CLIENT_CREDENTIALS_LENGTH,
    clockTolerance: options.clockTolerance,
    defaultTtl: options.defaultTtl,
    refreshReuseLeeway: options.refreshReuseLeeway,
    publicClientLeeway: options.publicClientLeeway,
    onReplay: (event, ctx) => theft?.report(event, ctx),
    // The account as a refresh would find it (configure()'s findAccount: the host's, and the organization's membership).
    accountLives: async (ctx, token) => {
      const find = providers.findAccount;
      if (!find || typeof token.accountId !== 'string') return true;
      return (await find(ctx as KoaContextWithOIDC, token.accountId, token as never)) !== undefined;
    },
    onAnswerAgain: (event) => {
      logger.info('refresh answer given again within the reuse leeway', { ...event });
      emit(REFRESH_REPLAYED_EVENT, event);
    },
  });
  // Taking over from the host's previous adapter (src/adopt/): it reads through and reaches endings there.
  const adopted = options.previousAdapter && createAdoption({
    store, inner: storeAdapter, logger, lifetimes: { clockTolerance: options.clockTolerance, defaultTtl: options.defaultTtl },
    previousAdapter: options.previousAdapter, closesAt: options.adoption.closesAt?.getTime(), records: options.adoption.records,
    checkEveryMs: options.adoption.checkEveryMs, timeoutMs: options.redisTimeoutMs, subject: subjectAt,
  });
  const ownAdapter = adopted ? adopted.adapter : storeAdapter;
  // The console's own client is answered by the adapter (its redirect URI needs the issuer).
  const adapter: StoreAdapter = { ...ownAdapter, factory: withConsoleClient(ownAdapter.factory, () => providers.attached?.issuer, options.serviceName) };
  const provider = () => providers.attached;

  const mailer = createMailer(options.mail);
  const sites = createConnectedSites(store);
  const organizations = createOrganizations(store, options.organizations);
  // Form tokens and unsubscribe links are keyed by the provider's cookie
  // keys (newest first), so every instance agrees and keys rotate together.
  const fallbackSecret = randomBytes(32);
  const secrets = (): (string | Buffer)[] => {
    const keys = signingProvider()?.keys as unknown;
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
  const onLetter: Parameters<typeof memoryLetterQueue>[2] = (event) => emit(LETTER_EVENT, event);
  const letters = options.redis
    ? bullmqLetterQueue(options.redis, options.keyPrefix, options.letters, logger, onLetter)
    : memoryLetterQueue(options.letters, logger, onLetter);
  const notices = createSecurityNotices({
    store, queue: letters, contacts, logger,
    inbox: { size: options.notify.inboxSize, maxAgeMs: options.notify.inboxMaxAgeDays * 86_400_000 },
    enabled: options.securityNotices,
  });

  // The two channels that tell the sites, then the one module that tells them (src/tell/).
  // Beside the letters' queue, run by the same worker (src/worker.ts, or in-process).
  const logoutQueueOptions = { ...options.backchannelLogout, stalledIntervalMs: options.letters.stalledIntervalMs };
  const logoutQueue = options.redis
    ? bullmqLogoutQueue(options.redis, options.keyPrefix, logoutQueueOptions, logger)
    : memoryLogoutQueue(logoutQueueOptions, logger);
  const logouts = createBackchannelLogout({
    store, queue: logoutQueue, logger, options: options.backchannelLogout, provider: signingProvider, notices,
    emit: (event) => emit(BACKCHANNEL_LOGOUT_EVENT, event),
  });
  const ssfOptions = { ...options.letters, keepSeconds: 3600 };
  const ssfQueue = options.redis ? bullmqSsfQueue(options.redis, options.keyPrefix, ssfOptions, logger) : memorySsfQueue(ssfOptions, logger);
  const streams = createStreams(store);
  const transmitter = createTransmitter({
    store, streams, queue: ssfQueue, sites, contacts, logger, limits: SSF_LIMITS, allowPrivateFetchHosts: options.allowPrivateFetchHosts,
    issuer: () => signingProvider()?.issuer,
    sign: setSigner(() => providers.jwks),
    subject: subjectAt, attempts: ssfOptions.attempts,
    emit: (event) => emit(SHARED_SIGNALS_EVENT, event),
  });
  const tell = createTell({ queueLogout: logouts.queueLogout, signal: transmitter.signal, secret: () => secrets()[0]! });

  // A session that ends by its lifetime tells its sites as a sign-out does (docs/session-expiry.md).
  const sessionExpiry = createSessionExpiry({ store, logger, tell, provider: signingProvider });
  const expirySweeper = options.redis
    ? bullmqExpirySweeper(options.redis, options.keyPrefix, options.sessionExpiry.sweepEveryMs, logger)
    : memoryExpirySweeper(options.sessionExpiry.sweepEveryMs, logger);
  const access = createSiteAccess({ sites, orgs: organizations, adapter, store, logger, tell, forgetExpiring: (accountId, clientId) => sessionExpiry.forget(accountId, { clientId }) });
  const lastUsed = createLastUsed(sites, { intervalSeconds: options.lastUsedInterval, logger, alongside: adapter.alongside });
  const sessions = createSessions({
    store, adapter, sites, logger, tell, expiry: sessionExpiry,
    // A worker process that polls an upstream (src/upstream-signals/poll.ts) ends sessions with the provider it was given.
    provider: () => providers.attached ?? providers.forLetters,
    toldEnded: (accountId, browser, browserId) => notices.give(accountId, 'sessions_ended', { browser, ref: browserId }),
  });
  // How the host's people sign in, in the security letters' and notices' words.
  const signInCheck = signInCheckFor(options.securityNotices.signInCheck, logger);
  theft = createTheft({
    logger,
    emit,
    notice: createTheftNotices({ notices, access, logger, windowMs: options.theftNotice.windowSeconds * 1000 }),
  });
  const recentSignIn = recentSignIns(provider, options.console.recentSignInSeconds);
  const sendLetter = letterSender({
    store, sites, orgs: organizations, senders, contacts, mailer, tokens,
    provider: signingProvider, serviceName: options.serviceName, logger, holdMs: options.letters.stalledIntervalMs, signInCheck,
  });

  const deletion = createAccountDeletion({
    store, adapter, sites, sessions, access, orgs: organizations, letters, ssfQueue, logoutQueue, logger, subject: subjectAt,
    accountPurged: (accountId) => transmitter.signalNow({ kind: 'account_purged', accountId, reason: 'account_purged' }),
  });
  const deleteAccount = adopted ? adopted.deleteAccount(deletion) : deletion;

  /** Every way in of the person ends: the host's endAccountAccess (plugin.ts), here for the receiver. */
  const endAccountAccess = async (accountId: string) => {
    const at = await adapter.endAccountGrants(accountId);
    await sessions.endAll(accountId);
    logger.warn('every grant and session of the person ended by the service');
    return at;
  };
  const upstreamSignals = createUpstreamReceiver({
    store, logger, upstreams: options.upstreamSignals.upstreams,
    account: options.upstreamSignals.account ?? (() => undefined),
    endAccountAccess,
    endSessionsThrough: (accountId, upstream) => sessions.endThrough(accountId, upstream),
    notice: (accountId, kind, details) => notices.give(accountId, kind, details),
    maxAgeSeconds: options.upstreamSignals.maxAgeSeconds,
    clockTolerance: options.clockTolerance,
  });
  const upstreamConnect = createUpstreamConnect({ store, receiver: upstreamSignals, upstreams: options.upstreamSignals.upstreams });
  const upstreamPoller = createUpstreamPoller({ store, logger, receiver: upstreamSignals, upstreams: options.upstreamSignals.upstreams });

  return {
    deleteAccount, endAccountAccess, upstreamSignals, upstreamPoller, upstreamConnect, adoption: adopted ? adopted.adoption : undefined, closeAdoption: adopted ? adopted.close : async () => {},
    streams, ssfQueue, transmitter, tell, sessionExpiry, expirySweeper,
    options, logger, store, events, emit, adapter, mailer, sites, organizations, access, lastUsed, sessions,
    csrf, senders, inbox, preferences, contacts, tokens, letters, logoutQueue, logouts, notices, theft: theft!, sendLetter, recentSignIn, browsers: createBrowsers(store), signInCheck,
  };
}

export type Parts = ReturnType<typeof createParts>;
