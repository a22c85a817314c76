/**
 * A letter worker in a process of its own, as a host would run one: the
 * reference provider (not listening) with the plugin's worker on, on the same
 * Redis and key prefix as the service. Tests start it and kill it (SIGKILL).
 * It retries the service's back-channel logouts too (to sites on loopback).
 * Env: REDIS_URL (or REDIS_CLUSTER), KEY_PREFIX, SMTP_URL, ISSUER, CLIENTS (JSON), STALLED_MS,
 * JWKS (JSON; the service's signing keys, which logout tokens need), SWEEP_MS (the session expiry sweep's period).
 */
import { Redis } from 'ioredis';

import { createReferenceProvider } from '../../examples/reference/provider.ts';
import { clusterClient } from './redis.ts';

const env = process.env;
// On the Cluster in the Cluster pass (REDIS_CLUSTER), as the service is.
const redis = env.REDIS_CLUSTER ? clusterClient(env.REDIS_CLUSTER) : new Redis(env.REDIS_URL!);
await createReferenceProvider({
  issuer: env.ISSUER!,
  clients: JSON.parse(env.CLIENTS!),
  redis,
  keyPrefix: env.KEY_PREFIX!,
  smtpUrl: env.SMTP_URL!,
  cookieKeys: ['test-cookie-key-0123456789'],
  allowPrivateFetchHosts: ['127.0.0.1'],
  ...(env.JWKS ? { jwks: JSON.parse(env.JWKS) } : {}),
  logger: { info() {}, warn() {}, error: (m) => console.error(m) },
  plugin: {
    letters: { worker: true, concurrency: 1, backoffMs: 50, stalledIntervalMs: Number(env.STALLED_MS ?? 1000) },
    ...(env.SWEEP_MS ? { sessionExpiry: { sweepEveryMs: Number(env.SWEEP_MS) } } : {}),
  },
});
console.log('worker ready');
