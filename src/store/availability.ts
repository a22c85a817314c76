import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { errors } from 'oidc-provider';

/**
 * Redis could not answer in time (down, restarting, failing over, stalled).
 * An oidc-provider error (503 `temporarily_unavailable`, RFC 6749 section
 * 4.1.2.1 and RFC 9110 section 15.6.4), so the provider's own routes answer
 * it as such, and the authorization endpoint sends it back to the site.
 */
export class StoreUnavailableError extends errors.OIDCProviderError {
  declare error_description: string;
  declare error_detail: string;

  constructor(reason: string) {
    super(503, 'temporarily_unavailable');
    this.expose = true;
    this.error_detail = reason;
    this.error_description = 'the service cannot reach its data store right now; try again shortly';
  }
}

// Replies that mean "not now" rather than "wrong": a Cluster slot without a
// master, a node loading its data or read-only after a failover.
const NOT_NOW = /^(CLUSTERDOWN|TRYAGAIN|LOADING|READONLY|MASTERDOWN|NOREPLICAS|BUSY)\b/;
// What ioredis says when it has no connection or gave up (its messages are its API).
const NO_CONNECTION = [
  'Connection is closed',
  "Stream isn't writeable",
  'Command timed out',
  'Too many Cluster redirections',
  "Cluster isn't ready",
  'None of startup nodes is available',
  'Failed to refresh slots cache',
  'Reached the max retries per request limit',
];

/** Whether an error from ioredis (or BullMQ over it) means Redis is unavailable, not that a command was wrong. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  if (NOT_NOW.test(err.message)) return true;
  if (NO_CONNECTION.some((m) => err.message.startsWith(m))) return true;
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT' || code === 'ENOTCONN';
}

/** Turns an unavailability into {@link StoreUnavailableError}; anything else goes on as it is. */
export function asUnavailable(err: unknown): never {
  if (isUnavailable(err) && !(err instanceof StoreUnavailableError)) {
    throw new StoreUnavailableError(`redis: ${(err as Error).message.slice(0, 120)}`);
  }
  throw err;
}

/**
 * How long ioredis waits before its next try to reach Redis again: 50, 100,
 * 200 ms, then 400 ms, each with up to 100 ms more at random, so that the
 * clients of many instances do not all come back at the same moment. The
 * service answers 503 until its client is connected again, so this bound is
 * how late it serves after Redis is back (ioredis' own schedule grows to 5 s);
 * a try at a Redis that is down costs one refused TCP connection.
 */
function reconnectDelay(attempt: number): number {
  return Math.min(25 * 2 ** attempt, 400) + Math.floor(Math.random() * 100);
}

/**
 * The reconnect settings to build the ioredis client you give the plugin with
 * (a single node or Sentinel): `new Redis(url, redisReconnect)` or
 * `new Redis({ sentinels, name, ...redisReconnect })`.
 *
 * - `retryStrategy`: after a lost connection, try again on the capped schedule
 *   above instead of ioredis' default, which waits up to 5 s between tries:
 *   after an 8 s outage the service answered 503 for 3.9-4.3 s once Redis was
 *   back with the default, under half a second with this (docs/operations.md "What the
 *   plugin sets on your ioredis client");
 * - `sentinelRetryStrategy`: the same schedule when no sentinel answers
 *   (ioredis' default grows to 1 s).
 *
 * `failoverDetector` stays off: in ioredis 6.0.0 a failover announced while
 * the client asks a sentinel for the master ends the client for good.
 * The letter worker's connections are duplicates of this client and follow
 * its schedule. A Cluster client needs none of this: it retries about every
 * 100 ms (`clusterRetryStrategy`) and finds a node's replacement itself.
 */
export const redisReconnect: Readonly<Pick<RedisOptions, 'retryStrategy' | 'sentinelRetryStrategy'>> = Object.freeze({
  retryStrategy: reconnectDelay,
  sentinelRetryStrategy: reconnectDelay,
});

/**
 * The ioredis settings the plugin relies on, applied to the host's client
 * (docs/operations.md "Running in production" says why each):
 *
 * - `commandTimeout`: at most `timeoutMs` (a shorter one of the host's stays);
 * - `autoResendUnfulfilledCommands: false`: a command in flight when the
 *   connection dropped is failed, never sent again after the reconnect,
 *   when its request has long been answered;
 * - `enableOfflineQueue: false` once the client has been ready: a command
 *   sent while disconnected fails at once instead of waiting for Redis and
 *   running when nobody waits for it any more (before the first connection
 *   it may queue, so a host can use the client right after creating it).
 *
 * On a Cluster the same goes into the node connections (`redisOptions` and
 * the nodes already there); the Cluster's own offline queue is turned off
 * once ready, its node queues stay (ioredis needs them to open a node).
 * `maxRetriesPerRequest` and the reconnect strategy stay the host's:
 * with the queue off they decide nothing for the plugin's commands (the
 * strategy decides how soon the service is back: {@link redisReconnect}).
 */
export function hardenClient(client: Redis | Cluster, timeoutMs: number): void {
  const safer = (options: Partial<RedisOptions>) => {
    const host = options.commandTimeout;
    options.commandTimeout = typeof host === 'number' && host > 0 && host < timeoutMs ? host : timeoutMs;
    options.autoResendUnfulfilledCommands = false;
  };
  const offlineQueueOff = () => { client.options.enableOfflineQueue = false; };
  if (client.isCluster) {
    const cluster = client as Cluster;
    cluster.options.redisOptions ??= {};
    safer(cluster.options.redisOptions);
    for (const node of cluster.nodes('all')) safer(node.options);
    cluster.on('+node', (node: Redis) => safer(node.options));
  } else {
    safer((client as Redis).options);
  }
  if (client.status === 'ready') offlineQueueOff();
  else client.once('ready', offlineQueueOff);
}
