import { MemoryStore } from '../src/store/store.ts';
import { createStoreAdapter, type StoreAdapter, type StoreAdapterOptions } from './store-adapter.ts';

/**
 * oidc-provider adapter on the embedded in-process store: unbounded (unlike
 * oidc-provider's own 1,000-entry LRU), with the same expiry and atomicity as
 * the Redis one; everything is lost on restart.
 */
export function memoryAdapter(options: StoreAdapterOptions & { keyPrefix?: string } = {}): StoreAdapter {
  return createStoreAdapter(new MemoryStore(options.keyPrefix ?? 'osn:'), options);
}
