/**
 * Starting the reference provider over an existing store of oidc-provider's
 * example Redis adapter (docs/reference-provider.md, "Over your previous
 * store"): PREVIOUS_REDIS_URL names that Redis, PREVIOUS_KEY_PREFIX its
 * prefix (the example's `oidc:`), PREVIOUS_UNTIL when the read-through stops
 * at the latest. The plugin then reads through to it and moves what it finds,
 * as a host's deployment does (docs/upgrading.md): a way to try the switch on
 * a copy of a team's data before deploying it.
 */
import { Redis } from 'ioredis';

import { exampleRedisAdapter, exampleRedisRecords } from '../../src/adoption.ts';
import type { SignoutNotifyOptions } from '../../src/index.ts';

export interface PreviousStoreEnv {
  PREVIOUS_REDIS_URL?: string | undefined;
  PREVIOUS_KEY_PREFIX?: string | undefined;
  PREVIOUS_UNTIL?: Date | undefined;
}

/** The plugin's options for the previous store the environment names, if it names one. */
export function previousStoreOptions(env: PreviousStoreEnv): Pick<SignoutNotifyOptions, 'previousAdapter' | 'adoption'> | undefined {
  if (!env.PREVIOUS_REDIS_URL) return undefined;
  // The example's client, without a keyPrefix of its own: the prefix is given to the reader.
  const client = new Redis(env.PREVIOUS_REDIS_URL, { maxRetriesPerRequest: 2 });
  const prefix = env.PREVIOUS_KEY_PREFIX ?? 'oidc:';
  return {
    previousAdapter: exampleRedisAdapter(client, { prefix }),
    adoption: { records: exampleRedisRecords(client, { prefix }), ...(env.PREVIOUS_UNTIL ? { closesAt: env.PREVIOUS_UNTIL } : {}) },
  };
}
