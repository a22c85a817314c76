import { lazyScript, type Script } from '../../src/store-kit.ts';

/**
 * The emailed-code sign-in's atomic steps: `lua/<name>.lua` beside this file
 * (KEYS and ARGV in its header) with its in-process twin for the embedded
 * store (`lazyScript` from oidc-signout-notify/store), as the plugin's own
 * scripts are made.
 */
const script = (name: string, memory: Script['memory']) => lazyScript(name, memory, import.meta.url);

export const signInGate = script('sign_in_gate', (kv, [devices, newRate, deviceRate, newFailures, deviceFailures], [mode, deviceHash, limit, windowMs, now]) => {
  const known = kv.hget(devices!, deviceHash!) === null ? 0 : 1;
  const lockedUntil = Number(kv.hget(known ? deviceFailures! : newFailures!, 'until') ?? 0);
  if (lockedUntil > Number(now)) return ['locked', lockedUntil - Number(now), known];
  if (mode !== 'issue') return ['ok', 0, known];
  const counter = known ? deviceRate! : newRate!;
  const n = kv.incrby(counter, 1);
  if (n === 1) kv.pexpire(counter, Number(windowMs));
  if (n <= Number(limit)) return ['ok', 0, known];
  let left = kv.pttl(counter);
  if (left < 0) {
    kv.pexpire(counter, Number(windowMs));
    left = Number(windowMs);
  }
  return ['rate', left, known];
});

export const signInFailure = script('sign_in_failure', (kv, [record], [free, windowMs, firstLockMs, maxLockMs, now]) => {
  const n = kv.hincrby(record!, 'n', 1);
  let lock = 0;
  if (n > Number(free)) {
    lock = Math.min(Number(maxLockMs), Number(firstLockMs) * 2 ** (n - Number(free) - 1));
    kv.hset(record!, { until: String(Number(now) + lock) });
  }
  kv.pexpire(record!, Math.max(Number(windowMs), lock));
  return lock;
});

export const signInCodeCheck = script('sign_in_code_check', (kv, [record], [max, now]) => {
  if (!kv.exists(record!)) return ['missing'];
  const [email, hash, expiresAt] = kv.hmget(record!, ['email', 'hash', 'expiresAt']);
  if (hash == null || Number(expiresAt) <= Number(now)) {
    kv.hdel(record!, 'hash', 'attempts', 'expiresAt');
    return ['expired', email ?? ''];
  }
  const n = kv.hincrby(record!, 'attempts', 1);
  if (n >= Number(max)) kv.hdel(record!, 'hash', 'attempts', 'expiresAt');
  return ['ok', n, hash, email ?? ''];
});

export const signInTrust = script('sign_in_trust', (kv, [devices], [deviceHash, now, keepMs]) => {
  kv.hset(devices!, { [deviceHash!]: now! });
  kv.pexpire(devices!, Number(keepMs));
  return 1;
});
