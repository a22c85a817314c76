/**
 * What is left naming a person: every key under a harness' prefix whose name
 * or value holds one of the texts (an account id, a subject), on Redis or on
 * the embedded store (deleteAccount's tests: docs/redis-keys.md "What
 * deleteAccount erases").
 */
import { MemoryStore } from '../../src/store/store.ts';
import { redisValue } from './redis.ts';
import type { Harness } from './reference.ts';

function memoryValue(store: MemoryStore, key: string): string {
  const tries = [() => store.kv.get(key), () => store.kv.hgetall(key), () => store.kv.zentries(key)];
  return JSON.stringify(tries.map((read) => { try { return read(); } catch { return null; } }));
}

/** Keys under the prefix whose name or value holds one of the texts. */
export async function keysNaming(h: Harness, texts: string[]): Promise<string[]> {
  const store = h.reference.plugin.store;
  const found: string[] = [];
  for await (const key of store.scan('*')) {
    const value = h.redis ? await redisValue(h.redis, key) : memoryValue(store as MemoryStore, key);
    if (texts.some((text) => key.includes(text) || value.includes(text))) found.push(key);
  }
  return found;
}
