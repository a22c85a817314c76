import type { Cluster, Redis } from 'ioredis';

import { RedisStore } from '../src/store/store.ts';
import { createStoreAdapter, type StoreAdapter, type StoreAdapterOptions } from './store-adapter.ts';

/** oidc-provider adapter on an ioredis client (single node, Sentinel or Cluster). */
export function redisAdapter(client: Redis | Cluster, options: StoreAdapterOptions & { keyPrefix?: string } = {}): StoreAdapter {
  return createStoreAdapter(new RedisStore(client, options.keyPrefix ?? 'osn:'), options);
}
