import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import { writeThrottle } from '../write-throttle.ts';
import type { ConnectedSites } from './connected-sites.ts';

/**
 * Sends `write` with the writes the request `ctx` collects (the token
 * endpoint's batch), so both leave in one round trip; at once when the
 * request collects none (StoreAdapter.alongside).
 */
export type Alongside = StoreAdapter['alongside'];

/**
 * "Last used" of Connected sites, coarse-grained: at most one write per site
 * and person per `intervalSeconds` in each process, decided in memory, and
 * never awaited by the request that used the access. At the token endpoint
 * (a refresh, a code exchange) the write leaves with the endpoint's own
 * writes, in the same round trip, whatever the host's account lookup does;
 * elsewhere (introspection, userinfo: once a minute per site and person) it
 * leaves on its own after the answer is decided. docs/console.md "Last used".
 */
export function createLastUsed(sites: ConnectedSites, options: { intervalSeconds: number; logger: Logger; alongside: Alongside }) {
  const throttle = writeThrottle(options.intervalSeconds * 1000);

  return {
    /** The site used its access to the person now, in the request `ctx`. Synchronous: the write goes on its own. */
    record(accountId: string, clientId: string, ctx?: object, at = Date.now()): void {
      // The console is the service itself, never a connected site.
      if (clientId === CONSOLE_CLIENT_ID) return;
      if (!throttle.due(`${accountId}\u0000${clientId}`, at)) return;
      // A failed write (Redis away) is tried again after the interval, by the next use.
      // At the token endpoint on a single node, the write goes inside the endpoint's one script.
      options.alongside(ctx, () => {
        sites.recordUse(accountId, clientId, at).catch((err: Error) => {
          options.logger.warn('last used not recorded', { clientId, reason: err.message });
        });
      }, { sites: sites.keys.sites(accountId), clientId, at });
    },
  };
}

export type LastUsed = ReturnType<typeof createLastUsed>;
