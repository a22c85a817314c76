import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

import { del, putTtl, type Store } from '../../src/store-kit.ts';
import { addressKey } from './accounts.ts';
import { createIpLimits, type Window } from './ip-limits.ts';
import { signInCodeCheck, signInFailure, signInGate, signInTrust } from './sign-in-scripts.ts';

/**
 * The limits of the emailed-code sign-in; docs/security.md "Security" lists them with
 * these defaults. "Per address" limits are kept apart for each browser that
 * signed in as that address before; all other browsers share one set.
 */
export interface LoginCodeLimits {
  /** Lifetime of a code. Default 10 minutes. */
  ttlMs: number;
  /** Tries per code; the last wrong one voids it. Default 5. */
  maxAttempts: number;
  /** Codes sent to one address per window (per browser scope). Default 5 per 15 minutes. */
  perAddress: Window;
  /** Code requests from one IP per window (checked first). Default 30 per 15 minutes. */
  perIp: Window;
  /** Code checks from one IP per window (checked first). Default 60 per 15 minutes. */
  checksPerIp: Window;
  /**
   * Wrong codes for one address (per browser scope), across codes: `free` per
   * `windowMs` (counted from the last one), then each further wrong code locks
   * checks and new codes for `firstLockMs`, doubling, at most `maxLockMs`.
   * Default 10 per 7 days, then 1 minute, 2, 4, ... up to 24 hours.
   */
  failures: { free: number; windowMs: number; firstLockMs: number; maxLockMs: number };
  /** How long a browser stays known for an address after its last sign-in. Default 180 days. */
  knownBrowserMs: number;
  /** How long the address of a sign-in is kept for "send a new code": the interaction's lifetime. Default 1 hour. */
  recordMs: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

export const defaultLoginCodeLimits: LoginCodeLimits = {
  ttlMs: 10 * MINUTE,
  maxAttempts: 5,
  perAddress: { limit: 5, windowMs: 15 * MINUTE },
  perIp: { limit: 30, windowMs: 15 * MINUTE },
  checksPerIp: { limit: 60, windowMs: 15 * MINUTE },
  failures: { free: 10, windowMs: 7 * DAY, firstLockMs: MINUTE, maxLockMs: DAY },
  knownBrowserMs: 180 * DAY,
  recordMs: 60 * MINUTE,
};

/** Why a code was not sent or not checked: the IP's limit, the address' code limit, or the wrong-code lock. */
export type Refusal = { refused: 'ip' | 'address' | 'locked'; retryAfterMs: number };
export type IssueResult = { code: string } | Refusal;
export type VerifyResult =
  | { email: string }
  | Refusal
  | { error: 'invalid'; attemptsLeft: number; email: string }
  | { error: 'expired'; email: string }
  | { error: 'missing' };

/** The pending sign-in of an interaction, as its pages show it. */
export interface Pending {
  email: string;
  /** False once the code expired or its tries are used up: only "send a new code" helps. */
  usable: boolean;
}

/**
 * Emailed sign-in codes, one pending code per interaction:
 * `<prefix>login-code:{<uid>}` hash { email, hash, attempts, expiresAt },
 * kept for the interaction's lifetime so the address survives an expired code.
 * Only an HMAC of the code is stored; the winner of two correct submissions is
 * whoever deletes the record first, so a code works once.
 *
 * `device` is the browser's id (a signed cookie of the interaction pages);
 * keys hold only an HMAC of it.
 */
export function createLoginCodes(store: Store, secret: string, limits: LoginCodeLimits = defaultLoginCodeLimits) {
  const p = store.prefix;
  const ipLimits = createIpLimits(store, { requests: limits.perIp, checks: limits.checksPerIp });
  const key = (uid: string) => `${p}login-code:{${uid}}`;
  const hmac = (value: string) => createHmac('sha256', secret).update(value).digest('base64url');
  const digest = (uid: string, code: string) => hmac(`code\0${uid}\0${code}`);
  const deviceHash = (device: string) => hmac(`device\0${device}`).slice(0, 22);
  // Keyed by addressKey: every spelling of one mailbox shares its limits.
  const addressKeys = (address: string, device: string) => {
    const d = deviceHash(device);
    const email = addressKey(address);
    return {
      hash: d,
      devices: `${p}login-device:{${email}}`,
      rate: [`${p}rate:login-address:{${email}}:new`, `${p}rate:login-address:{${email}}:${d}`],
      failures: [`${p}login-failures:{${email}}:new`, `${p}login-failures:{${email}}:${d}`],
    };
  };

  /** The address' gate for this browser: ok, or why not and for how long. */
  async function gate(mode: 'issue' | 'check', email: string, device: string) {
    const k = addressKeys(email, device);
    const [verdict, ms, known] = (await store.run(signInGate(), [k.devices, ...k.rate, ...k.failures], [mode, k.hash, limits.perAddress.limit, limits.perAddress.windowMs, Date.now()])) as [string, number, number];
    return { verdict, ms, failures: k.failures[known]!, k };
  }

  return {
    limits,
    /** The per-IP limits, which the other ways in (passkeys, upstreams) share. */
    ipLimits,

    /**
     * Sends nothing itself: returns the new code for the interaction's letter,
     * or the refusal. The IP's limit is asked first, so a refused request
     * leaves no key behind for the address it named.
     */
    async issue(uid: string, email: string, ip: string, device: string): Promise<IssueResult> {
      const ipWait = await ipLimits.hit('requests', ip);
      // Stryker disable next-line StringLiteral: the pages read 'locked' and 'address' and take any other refusal for the IP's limit
      if (ipWait > 0) return { refused: 'ip', retryAfterMs: ipWait };
      const { verdict, ms } = await gate('issue', email, device);
      if (verdict !== 'ok') return { refused: verdict === 'locked' ? 'locked' : 'address', retryAfterMs: ms };
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await store.run(putTtl(), [key(uid)], [
        limits.recordMs, 'email', email, 'hash', digest(uid, code), 'attempts', 0, 'expiresAt', Date.now() + limits.ttlMs,
      ]);
      return { code };
    },

    /** The interaction's pending sign-in, if an address was given. */
    async pending(uid: string): Promise<Pending | undefined> {
      const [email, expiresAt] = await store.hmget(key(uid), ['email', 'expiresAt']);
      if (!email) return undefined;
      // A voided code (tries used up, or expired at a check) has lost its expiresAt with its hash.
      return { email, usable: Number(expiresAt) > Date.now() };
    },

    async verify(uid: string, code: string, ip: string, device: string): Promise<VerifyResult> {
      const [ipWait, [email]] = await Promise.all([
        ipLimits.hit('checks', ip),
        store.hmget(key(uid), ['email']),
      ]);
      // Stryker disable next-line StringLiteral: the pages read 'locked' and 'address' and take any other refusal for the IP's limit
      if (ipWait > 0) return { refused: 'ip', retryAfterMs: ipWait };
      if (!email) return { error: 'missing' };
      const g = await gate('check', email, device);
      if (g.verdict === 'locked') return { refused: 'locked', retryAfterMs: g.ms };
      const reply = (await store.run(signInCodeCheck(), [key(uid)], [limits.maxAttempts, Date.now()])) as string[];
      if (reply[0] === 'missing') return { error: 'missing' };
      if (reply[0] === 'expired') return { error: 'expired', email };
      const [, attempts, hash] = reply;
      const expected = Buffer.from(hash!);
      const given = Buffer.from(digest(uid, code.trim()));
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        const f = limits.failures;
        const lock = Number(await store.run(signInFailure(), [g.failures], [f.free, f.windowMs, f.firstLockMs, f.maxLockMs, Date.now()]));
        if (lock > 0) return { refused: 'locked', retryAfterMs: lock };
        // Stryker disable next-line StringLiteral: the pages read 'missing' and 'expired' and take any other error for a wrong code
        return { error: 'invalid', attemptsLeft: limits.maxAttempts - Number(attempts), email };
      }
      const won = (await store.run(del(), [key(uid)], [])) === 1;
      if (!won) return { error: 'expired', email };
      await store.run(signInTrust(), [g.k.devices], [g.k.hash, Date.now(), limits.knownBrowserMs]);
      return { email };
    },

    async cancel(uid: string): Promise<void> {
      await store.del([key(uid)]);
    },
  };
}

export type LoginCodes = ReturnType<typeof createLoginCodes>;
