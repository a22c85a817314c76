import * as commands from '../src/store/commands.ts';
import type { Store } from '../src/store/store.ts';
import { createBatch } from './batch.ts';
import { createConsume } from './consume.ts';
import { adapterKeys } from './keys.ts';
import { createLeeway } from './leeway.ts';
import { modelAdapters } from './model.ts';
import { createRecords } from './records.ts';
import { RequestStates } from './request-state.ts';
import { createTokenReads } from './token-reads.ts';
import type { StoreAdapter, StoreAdapterOptions } from './types.ts';

export { adapterKeys, tokenReadKeyParts } from './keys.ts';
export type { AnswerAgainEvent, ReplayEvent, SiteUse, StoreAdapter, StoreAdapterOptions } from './types.ts';

/**
 * oidc-provider's adapter contract over a {@link Store}, made of its ideas:
 * the key layout (keys.ts), records and their marks (records.ts), a token's
 * reads with what follows them (token-reads.ts), the reuse leeway
 * (leeway.ts), the consume (consume.ts) and the token endpoint's batch
 * (batch.ts), each model's Adapter (model.ts). docs/architecture.md draws it.
 */
export function createStoreAdapter(store: Store, options: StoreAdapterOptions = {}): StoreAdapter {
  const keys = adapterKeys(store.prefix);
  const states = new RequestStates();
  const records = createRecords(store, keys, { clockTolerance: options.clockTolerance ?? 15, defaultTtl: options.defaultTtl ?? 14 * 24 * 60 * 60 });
  const leeway = createLeeway({ store, keys, records, states, options });
  const tokenReads = createTokenReads({ store, keys, records, states, leewayMs: leeway.leewayMs, withinLeeway: leeway.withinLeeway });
  const consume = createConsume({ store, keys, records, leeway, states, options });
  const batch = createBatch({ store, keys, records, consume, leeway, states });
  const factory = modelAdapters({ store, keys, records, tokenReads, consume, collecting: batch.collecting, clientCredentialsLength: options.clientCredentialsLength });

  const endBefore = (key: string, field: 'grants' | 'sessions', keep = '') =>
    store.run(commands.endBefore(), [key], [field, Date.now(), keep]).then(Number);

  return {
    factory,
    revokeGrant: records.revokeGrant,
    grantIds: records.grantIds,
    async revokeAccountGrants(accountId, clientId) {
      const ids = await records.grantIds(accountId, clientId);
      await Promise.all(ids.map(records.revokeGrant));
      await store.del([keys.accountGrants(accountId, clientId)]);
      return ids;
    },
    endSiteGrants: (clientId) => endBefore(keys.siteEnded(clientId), 'grants'),
    endAccountGrants: (accountId) => endBefore(keys.personEnded(accountId), 'grants'),
    endAccountSessions: (accountId, keep) => endBefore(keys.personEnded(accountId), 'sessions', keep),
    endedMarks: (accountId, clientId) => records.readMarks(accountId, clientId),
    batch: batch.batch,
    flush: batch.flush,
    alongside: batch.alongside,
    takeReplay: batch.takeReplay,
    consumedSource: batch.consumedSource,
  };
}
