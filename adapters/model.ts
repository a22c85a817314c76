import type { Adapter, AdapterPayload } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import type { Store } from '../src/store/store.ts';
import type { Consume } from './consume.ts';
import { CREDENTIALS, GRANTABLE, type AdapterKeys } from './keys.ts';
import type { Records } from './records.ts';
import type { Write } from './request-state.ts';
import type { createTokenReads } from './token-reads.ts';

/** oidc-provider's Adapter contract for one model, on the parts the store adapter is made of. */
export function modelAdapters(deps: {
  store: Store;
  keys: AdapterKeys;
  records: Records;
  tokenReads: ReturnType<typeof createTokenReads>;
  consume: Consume;
  /** The writes the current request collects (the token endpoint's batch), if any. */
  collecting: () => Write[] | undefined;
  /** The length of every client-credentials token value, when the configuration fixes it (StoreAdapterOptions). */
  clientCredentialsLength?: number | undefined;
}): (model: string) => Adapter {
  const { store, keys, records, tokenReads } = deps;

  class StoreModelAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    key(id: string): string {
      return keys.record(this.model, id);
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      // A proof's or client assertion's jti (ReplayDetection) is recorded at once: a request
      // that fails later discards its batch, and a jti it presented must not be usable again.
      const pending = this.model === 'ReplayDetection' ? undefined : deps.collecting();
      if (pending) {
        pending.push({ consume: false, model: this.model, id, payload, expiresIn });
        return;
      }
      await records.write(this.model, id, payload, expiresIn);
    }

    // Not async where it hands on a promise: each extra promise costs on the hot path.
    find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Grant') return tokenReads.readOnce(this.key(id), 'Grant');
      if (this.model === 'Session') return records.readMarked('Session', this.key(id));
      // Not a client-credentials value (keys.ts, CLIENT_CREDENTIALS_LENGTH): introspection's and revocation's second look costs nothing.
      if (this.model === 'ClientCredentials' && deps.clientCredentialsLength !== undefined && id.length !== deps.clientCredentialsLength) return Promise.resolve(undefined);
      if (!GRANTABLE.has(this.model)) return records.read(this.key(id), CREDENTIALS.has(this.model) ? id : undefined);
      return tokenReads.readToken(this.model, this.key(id), id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return tokenReads.readOnce(keys.sessionUid(uid), 'Session');
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const [pointer] = await store.hmget(keys.userCode(userCode), ['p']);
      return pointer == null ? undefined : this.find(JSON.parse(pointer) as string);
    }

    async consume(id: string): Promise<void> {
      const pending = deps.collecting();
      if (pending) {
        pending.push({ consume: true, model: this.model, id });
        return;
      }
      await deps.consume.markConsumed(this.model, id);
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Grant') {
        await records.revokeGrant(id);
        return;
      }
      const key = this.key(id);
      if (this.model === 'Session') {
        const [p] = await store.hmget(key, ['p']);
        const uid = p ? (JSON.parse(p) as AdapterPayload).uid : undefined;
        await store.del(uid ? [key, keys.sessionUid(uid)] : [key]);
        return;
      }
      await store.del([key]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const members = (await store.run(
        commands.indexTake(),
        [keys.grantIndex(grantId)],
        [`${store.prefix}${this.model}:`],
      )) as string[];
      await store.del(members);
    }
  }

  return (model) => new StoreModelAdapter(model);
}
