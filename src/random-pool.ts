import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn from a pool the CSPRNG refills 4 KiB at a time, as
 * Node's own `randomUUID()` and oidc-provider's token ids do. Each
 * `crypto.randomBytes()` call costs about what filling the whole pool does
 * (Node's per-call job: 6 µs alone, about 20 µs in a server whose
 * AsyncLocalStorage hooks every resource, measured on the refresh and
 * notify paths), where those paths need 12 or 16 bytes. Every byte is handed
 * out once, copied out of the pool.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let used = POOL_BYTES;

export function pooledRandomBytes(size: number): Buffer {
  if (!Number.isInteger(size) || size < 0 || size > POOL_BYTES) throw new RangeError(`size must be an integer from 0 to ${POOL_BYTES}`);
  if (used + size > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.allocUnsafe(size);
  pool.copy(out, 0, used, used + size);
  used += size;
  return out;
}

/** A random identifier: `bytes` random bytes as base64url (16: 22 characters, 128 bits). */
export function randomId(bytes = 16): string {
  return pooledRandomBytes(bytes).toString('base64url');
}
