/**
 * `oidc-signout-notify/store`: keeping the host's own records (accounts,
 * sign-in codes, passkeys, limits) in the plugin's store, atomically and the
 * same on Redis and on the embedded store, as the reference provider does.
 * The store is `plugin.store`; its keys start with `store.prefix`, and on a
 * Cluster the keys one script touches share a hash tag (`{...}`).
 *
 * A read-modify-write is a script: a Lua file of the host's, with its
 * in-process twin for the embedded store (`lazyScript`), run with
 * `store.run(script(), keys, argv)`. The generic steps below cover what most
 * records need; each is a function that gives the script (its Lua is read on
 * first use, not at import). No side effects on import.
 */
import * as commands from './store/commands.ts';
import type * as memory from './store/memory-kv.ts';
import type * as scripts from './store/scripts.ts';

export { defineScript, lazyScript } from './store/scripts.ts';
export type { Script, ScriptReply } from './store/scripts.ts';
export type { Store } from './store/store.ts';
export { pairsToObject } from './store/commands.ts';

/** The embedded store's data as a script's in-process twin sees it: the Redis commands the twin may use, on strings, hashes and sorted sets. */
export type MemoryKV = memory.MemoryKV;

type Step = () => scripts.Script;

/**
 * KEYS[1] a string key; ARGV[1] a value. Sets the key unless it exists and
 * answers the value it holds afterwards: the first of two writers wins
 * (a lookup such as address -> account id). Persistent: no TTL.
 */
export const claim: Step = commands.claim;

/**
 * KEYS[1] a hash; ARGV field, value, field, value, .... Sets the fields and
 * answers how many were new. Persistent: no TTL (accounts, settings).
 */
export const hset: Step = commands.hset;

/** KEYS[1] a hash; ARGV[1] a field, ARGV[2] its value. Sets the field unless it is set: 1 when set, 0 when it was (first write wins). */
export const hsetnx: Step = commands.hsetnx;

/**
 * KEYS[1] a hash; ARGV[1] its TTL in milliseconds, then field, value, ....
 * Replaces the hash and gives it the TTL in one step: short-lived records
 * (a pending sign-in, a challenge) never exist without their expiry.
 */
export const putTtl: Step = commands.putTtl;

/** KEYS[1] a key. Deletes it and answers 1 when this call did: the one winner of a race to use something once. */
export const del: Step = commands.del;

/**
 * KEYS[1] a counter; ARGV[1] the limit, ARGV[2] the window in milliseconds.
 * A fixed window: `[1, hits left]` when this hit is allowed, `[0, ms until
 * the window ends]` when not. The counter expires with its window.
 */
export const rateLimit: Step = commands.rateLimit;
