import { rateLimit, type Store } from '../../src/store-kit.ts';

export interface Window { limit: number; windowMs: number }

/**
 * The sign-in's limits per client IP (docs/security.md "Security", shared by every way
 * in: `requests` counts what starts a sign-in that costs the service
 * something (a code letter, a passkey sign-up), `checks` counts what proves
 * one (a code checked, a failed passkey assertion, a failed upstream sign-in).
 * Keys: `<prefix>rate:login-ip:{<ip>}` and `<prefix>rate:login-check-ip:{<ip>}`,
 * fixed windows with a TTL.
 */
export function createIpLimits(store: Store, rules: { requests: Window; checks: Window }) {
  const p = store.prefix;
  const names = { requests: 'login-ip', checks: 'login-check-ip' } as const;
  const key = (kind: keyof typeof names, ip: string) => `${p}rate:${names[kind]}:{${ip}}`;

  return {
    /** Counts one against the IP; 0 when allowed, else the ms until its window ends. */
    async hit(kind: keyof typeof names, ip: string): Promise<number> {
      const rule = rules[kind];
      const [ok, value] = (await store.run(rateLimit(), [key(kind, ip)], [rule.limit, rule.windowMs])) as [number, number];
      return ok === 1 ? 0 : value;
    },
    /**
     * Whether the IP is still under its limit, counting nothing (a passkey or
     * an upstream sign-in that then succeeds costs no check); the ms to wait, else 0.
     */
    async wait(kind: keyof typeof names, ip: string): Promise<number> {
      const [count, ttl] = await Promise.all([store.get(key(kind, ip)), store.pttl(key(kind, ip))]);
      return Number(count ?? 0) >= rules[kind].limit ? Math.max(ttl, 1) : 0;
    },
  };
}

export type IpLimits = ReturnType<typeof createIpLimits>;
