import { CONSOLE_CLIENT_ID } from '../console/console-client.ts';
import type { Logger } from '../options.ts';
import { writeThrottle } from '../write-throttle.ts';
import type { ConnectedSites } from './connected-sites.ts';

/**
 * "Last used" of Connected sites, coarse-grained: at most one write per site
 * and person per `intervalSeconds` in each process, decided in memory, and
 * never awaited by the request that used the access. On the hot paths the
 * write is sent beside a command the request sends anyway (the account
 * lookup of a refresh, a code exchange or userinfo), so it adds no round
 * trip; introspection sends nothing else, and its write (once a minute)
 * leaves after the answer is decided. README "Last used".
 */
export function createLastUsed(sites: ConnectedSites, options: { intervalSeconds: number; logger: Logger }) {
  const throttle = writeThrottle(options.intervalSeconds * 1000);

  return {
    /** The site used its access to the person now. Synchronous: the write goes on its own. */
    record(accountId: string, clientId: string, at = Date.now()): void {
      // The console is the service itself, never a connected site.
      if (clientId === CONSOLE_CLIENT_ID) return;
      if (!throttle.due(`${accountId}\u0000${clientId}`, at)) return;
      // A failed write (Redis away) is tried again after the interval, by the next use.
      sites.recordUse(accountId, clientId, at).catch((err: Error) => {
        options.logger.warn('last used not recorded', { clientId, reason: err.message });
      });
    },
  };
}

export type LastUsed = ReturnType<typeof createLastUsed>;
