import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createStoreAdapter, type StoreAdapter } from '../adapters/store-adapter.ts';
import { consoleLogger } from './log.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { resolveOptions, type Logger, type ResolvedOptions, type SignoutNotifyOptions } from './options.ts';
import { configureProvider } from './provider/configure.ts';
import { endSessionPreStep } from './provider/end-session.ts';
import { missingClientAuthIsInvalidClient } from './provider/missing-client-auth.ts';
import { MemoryStore, RedisStore, type Store } from './store/store.ts';

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

  const adapter = createStoreAdapter(store, {
    clockTolerance: options.clockTolerance,
    defaultTtl: options.defaultTtl,
    onReplay(event) {
      logger.warn('refresh token or code replayed: grant revoked', { ...event });
      provider?.emit('signout_notify.replay_detected', event);
    },
  });

  const mailer = createMailer(options.mail);
  let provider: Provider | undefined;

  return {
    options,
    store,
    adapter,
    mailer,
    logger,
    configure: (host) => configureProvider(host, {
      adapter,
      logger,
      allowPrivateFetchHosts: options.allowPrivateFetchHosts,
      serviceName: options.serviceName,
      contacts: options.contacts,
    }),
    attach(target) {
      provider = target;
      target.use(missingClientAuthIsInvalidClient());
      target.use(endSessionPreStep(target));
    },
    async close() {
      await mailer.close();
      await store.close();
    },
  };
}
