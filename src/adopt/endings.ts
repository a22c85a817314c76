import type { Adapter } from 'oidc-provider';

import type { StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import { namesAccount } from '../sites/delete-account.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { UnreadableRecordError } from './bounded.ts';
import type { AdoptKeys } from './keys.ts';
import type { Move } from './move.ts';
import type { RecordSource } from './previous.ts';
import type { AdoptionWindow } from './window.ts';

/** Previous records read at once while deleteAccount looks for the person's. */
const AT_ONCE = 50;

/**
 * Endings reach records that have not moved yet (docs/upgrading.md). The
 * "ended before" marks apply to a moved record as to a native one (it keeps
 * its iat and loginTs), and revocation and /session/end find what they end
 * through the read-through. What remains is here: a revoked grant's records in
 * the previous store go with it and it never moves in again; Block site,
 * Remove access and theft (every grant of a person at a site) write a mark
 * that refuses the person's grants at the site still waiting there.
 */
export function adoptingAdapter(inner: StoreAdapter, factory: (model: string) => Adapter, deps: { store: Store; adopt: AdoptKeys; window: AdoptionWindow; move: Move }): StoreAdapter {
  return {
    ...inner,
    factory,
    async revokeGrant(grantId) {
      await inner.revokeGrant(grantId);
      if (deps.window.open) await deps.move.forbidGrant(grantId);
    },
    async revokeAccountGrants(accountId, clientId) {
      const open = deps.window.open;
      // Before the plugin's own revocation: a grant moving in meanwhile is refused by the mark or revoked with the rest.
      if (open) await deps.store.run(commands.claim(), [deps.adopt.personSiteEnded(accountId, clientId)], [Date.now()]);
      const ids = await inner.revokeAccountGrants(accountId, clientId);
      if (open) await Promise.all(ids.map((id) => deps.move.forbidGrant(id)));
      return ids;
    },
  };
}

/**
 * deleteAccount while the window is open: every record of the person still in
 * the previous store is destroyed there first (found by walking its listing,
 * each record read: the previous store has no index by person), then the
 * plugin's deletion runs. Without a listing there is no way to find them, and
 * the deletion is refused before it starts.
 */
export function erasingPrevious<R>(deleteAccount: (accountId: string) => Promise<R>, deps: { window: AdoptionWindow; records: RecordSource | undefined; previous: (model: string) => Adapter; logger: Logger }) {
  return async (accountId: string): Promise<R> => {
    // A process that just started has not asked the store yet whether the import finished (a command, a job).
    await deps.window.refresh();
    if (deps.window.open) {
      if (!deps.records) {
        throw new TypeError('oidc-signout-notify: deleteAccount cannot reach the previous store while the adoption window is open without adoption.records (where its records are listed); set it, or finish the import first');
      }
      let erased = 0;
      let unreadable = 0;
      for await (const { records } of deps.records.pages()) {
        for (let i = 0; i < records.length; i += AT_ONCE) {
          erased += (await Promise.all(records.slice(i, i + AT_ONCE).map(async ({ model, id }) => {
            const adapter = deps.previous(model);
            // A record that cannot be read names nobody the plugin can see (and never moves in): it does not stop the deletion.
            const payload = await adapter.find(id).catch((err: unknown) => {
              if (!(err instanceof UnreadableRecordError)) throw err;
              unreadable += 1;
              return undefined;
            });
            if (!payload || !namesAccount(payload, accountId)) return 0;
            await adapter.destroy(id);
            return 1;
          }))).reduce((a: number, b) => a + b, 0);
        }
      }
      deps.logger.warn('a person\'s records were erased from the previous store', { records: erased, ...(unreadable ? { unreadable } : {}) });
    }
    return deleteAccount(accountId);
  };
}
