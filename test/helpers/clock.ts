/**
 * The clock that decides. A TTL, an expiry or a time Redis computes is read
 * against Redis' clock (TIME), one this process computes against
 * Date.now(); an assertion brackets the act between two readings of that
 * clock, so a millisecond that turns between the act and the test's own
 * reading cannot fail it (issue 35: a PTTL once compared with the process
 * clock read after the command).
 */
import type { Cluster, Redis } from 'ioredis';

export type Clock = () => Promise<number>;

/** This process's clock (the embedded store's, the plugin's). */
export const processClock: Clock = async () => Date.now();

/** Redis' clock in ms (TIME); on a Cluster, a master's (the test Cluster's nodes share one machine). */
export function redisClock(client: Redis | Cluster): Clock {
  const node = client.isCluster ? () => (client as Cluster).nodes('master')[0]! : () => client as Redis;
  return async () => {
    const [seconds, micros] = await node().time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
}

/** The clock of a store: Redis' when it is on Redis, else this process's. */
export const clockOf = (client: Redis | Cluster | undefined): Clock => (client ? redisClock(client) : processClock);

/** Runs `act` between two readings of `clock`: whatever `act` read of that clock lies within [before, after]. */
export async function bracket<T>(clock: Clock, act: () => Promise<T>): Promise<{ before: number; value: T; after: number }> {
  const before = await clock();
  const value = await act();
  const after = await clock();
  return { before, value, after };
}

/**
 * How much earlier than its delay a timer may seem to fire, read with
 * Date.now(): libuv reckons a timer from the loop's time, cached when the
 * loop's iteration began, so a timer set late in a busy iteration fires
 * that much early by the wall clock (a queue's 200 ms retry was measured at
 * 199 ms once in five runs of npm test). Lower bounds of a wait allow it.
 */
export const TIMER_EARLY_MS = 25;
