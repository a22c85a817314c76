/**
 * `oidc-signout-notify/worker`: the letter worker as a process of its own.
 * The service process queues letters (`letters: { worker: false }`); one or
 * more worker processes send them, and retry the back-channel logouts a site
 * did not take at once (docs/backchannel-logout.md). BullMQ hands each letter to one worker; a
 * worker that dies mid-letter leaves it to the next (README, "Adding the
 * plugin to an existing provider"; docs/operations.md "Topology").
 */
import type Provider from 'oidc-provider';

import type { SignoutNotify } from './plugin.ts';

export interface LetterWorkerOptions {
  /** The plugin, created with the same options as the service's (same Redis, key prefix, mail and contacts). */
  plugin: SignoutNotify;
  /**
   * A provider built with the service's configuration (`plugin.configure(...)`):
   * letters take the issuer, the sites' names and the cookie keys (which sign
   * unsubscribe links) from it. It need not listen or be attached.
   */
  provider: Provider;
  /**
   * Signals that stop the worker gracefully. Default `['SIGTERM', 'SIGINT']`;
   * `false` installs none (call `stop()`). A second signal is left to Node's
   * default (the process ends at once).
   */
  signals?: readonly NodeJS.Signals[] | false;
}

export interface LetterWorker {
  /** Resolves once the worker has stopped: the letters in hand sent, the plugin's queue and transports closed. */
  readonly stopped: Promise<void>;
  /** Stops taking letters, finishes those in hand, closes the plugin (not the host's Redis client). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Sends letters in this process until SIGTERM or SIGINT (or `stop()`), then
 * finishes the letters in hand and closes the plugin. Letters not started
 * stay queued for the next worker: none is lost. Close your Redis client
 * after `stopped` resolves so that the process can end.
 */
export function runLetterWorker(options: LetterWorkerOptions): LetterWorker {
  const { plugin, provider } = options;
  if (!plugin.options.redis) {
    throw new TypeError('oidc-signout-notify: runLetterWorker needs the plugin on Redis; the embedded store keeps its letters in the service process');
  }
  const signals = options.signals === false ? [] : options.signals ?? ['SIGTERM', 'SIGINT'];
  plugin.startLetterWorker(provider);
  plugin.logger.info('letter worker started', { pid: process.pid });

  const { promise: stopped, resolve, reject } = Promise.withResolvers<void>();
  // Whoever awaits `stopped` or `stop()` sees a failure; not both as unhandled.
  stopped.catch(() => {});
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      await plugin.stopLetterWorker();
      await plugin.close();
      plugin.logger.info('letter worker stopped', { pid: process.pid });
    })();
    stopping.then(resolve, reject);
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    plugin.logger.info('letter worker stopping: finishing the letters in hand', { signal });
    stop().catch(() => {});
  };
  for (const signal of signals) process.once(signal, onSignal);
  return { stopped, stop };
}
