/**
 * Social sign-in's records: the upstreams as CONFIG_FILE lists them, what
 * they said about a person, the sign-ins under way and the links of accounts
 * to upstream accounts. upstream-clients.ts talks to the upstreams.
 */
import { claim, hsetnx, putTtl, type Store } from '../../src/store-kit.ts';
import { normalizeDomain } from './accounts.ts';
import { recordUpdate, release, takeRecord } from './sign-in-method-scripts.ts';
import { digest, methodKeys, removeMethod, type RemoveResult } from './sign-in-methods.ts';

/** A social sign-in: an OpenID Connect provider people may sign in with (CONFIG_FILE `upstreams`). */
export interface Upstream {
  /** In URLs and keys: lower-case letters, digits and hyphens. */
  id: string;
  /** On the button: "Continue with <name>". */
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  /** Default `openid email profile`. */
  scope?: string | undefined;
  /**
   * Domains this upstream owns: its verified address in one of them links
   * to the account of that address at once (still told to its owner),
   * without asking for the account's proof first. Exact match after
   * normalisation (accounts.ts normalizeDomain): a subdomain is
   * listed on its own. None by default.
   */
  trustedEmailDomains?: string[] | undefined;
  /**
   * Its security events (docs/upstream-signals.md): where its SET signing keys
   * are, the `aud` it addresses us by (default: our client id at it), the
   * events acted on (default all). It pushes to `/upstream-signals/<id>`.
   */
  signals?: UpstreamSignalsConfig | undefined;
}

/** An upstream's security events, as CONFIG_FILE `upstreams[].signals` gives them. */
export interface UpstreamSignalsConfig {
  /** The SETs' `iss` when it is not the upstream's issuer (Google's RISC SETs: `https://accounts.google.com/`, with the slash). */
  issuer?: string | undefined;
  jwksUri?: string | undefined;
  configurationUrl?: string | undefined;
  audiences?: string[] | undefined;
  events?: string[] | undefined;
  /** Google's Cross-Account Protection sends SETs without `typ`. */
  allowUntypedSets?: boolean | undefined;
  /** Poll its stream (RFC 8936) with this provider's client credentials at it, instead of receiving pushes. */
  poll?: { endpoint: string; tokenEndpoint: string; everyMs?: number | undefined } | undefined;
  /** Make or adopt the push stream at an SSF transmitter (with `configurationUrl`) with this provider's client credentials at it (`plugin.upstreamSignals.connect`). */
  stream?: { tokenEndpoint: string } | undefined;
}

/**
 * Whether the upstream owns the address' domain (its `trustedEmailDomains`):
 * exact match after normalizeDomain; a subdomain is not its parent (each is
 * listed on its own), and `evil-example.test` is not `example.test`.
 */
export function trustedDomain(upstream: Upstream, address: string): boolean {
  const at = address.lastIndexOf('@');
  const domain = at > 0 ? normalizeDomain(address.slice(at + 1)) : '';
  return domain !== '' && (upstream.trustedEmailDomains ?? []).some((d) => normalizeDomain(d) === domain);
}

/** What an upstream said about the person, after every check. */
export interface UpstreamIdentity {
  sub: string;
  /**
   * The address, only when the source that gave it (the ID token, else
   * UserInfo) said `email_verified: true` with it. An unverified address is
   * dropped here: never matched, stored or shown.
   */
  verifiedEmail?: string | undefined;
  name?: string | undefined;
  /** The ID token's `amr`, as the upstream gave it (strength.ts keeps RFC 8176's values). */
  amr?: unknown;
}

/** An account's link to an upstream account (persistent). */
export interface UpstreamLink {
  upstream: string;
  sub: string;
  /** What the upstream said when linked, to show the person which account it is: a verified address only. */
  verifiedEmail?: string | undefined;
  name?: string | undefined;
  linkedAt: number;
  lastUsedAt?: number | undefined;
}

/** An upstream sign-in under way, kept server-side under a digest of its `state`. */
export interface UpstreamState {
  upstream: string;
  /** 'login' (an interaction) or 'link' (the console). */
  mode: 'login' | 'link';
  uid?: string | undefined;
  accountId?: string | undefined;
  verifier: string;
  nonce: string;
  /** When the person was sent (ms): the upstream must have authenticated them after it. */
  startedAt: number;
}

/** Why an upstream sign-in did not work, as pages and logs name it (never the upstream's words). */
export type UpstreamFailure = 'denied' | 'failed' | 'unavailable' | 'reauth' | 'expired' | 'held';

/** How long an upstream sign-in under way may take: its `state` is kept this long. */
export const STATE_TTL_MS = 10 * 60_000;

/** An upstream sign-in that did not work: `failure` for the page, the message for the log. */
export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;
  constructor(failure: UpstreamFailure, reason: string) {
    super(reason);
    this.failure = failure;
  }
}

/**
 * Upstream sign-ins under way and the links of accounts to upstream
 * accounts. `<prefix>upstream-state:{<sha256(state)>}` (10 minutes, taken
 * once); persistent: `<prefix>upstream:{<upstream id>:<sha256(sub)>}` ->
 * account id, and the account's `...:upstreams` hash (upstream id -> JSON
 * link, one per upstream).
 */
export function createUpstreamLinks(store: Store) {
  const p = store.prefix;
  const stateKey = (state: string) => `${p}upstream-state:{${digest(state)}}`;
  const subKey = (upstream: string, sub: string) => `${p}upstream:{${upstream}:${digest(sub)}}`;

  async function list(accountId: string): Promise<UpstreamLink[]> {
    const all = await store.hgetall(methodKeys(p, accountId).upstreams);
    return Object.entries(all).map(([upstream, raw]) => {
      // Only the fields of a link: one made before verifiedEmail kept an `email` whether or not it was verified.
      const { sub, verifiedEmail, name, linkedAt, lastUsedAt } = JSON.parse(raw) as Omit<UpstreamLink, 'upstream'>;
      return { upstream, sub, linkedAt, ...(verifiedEmail ? { verifiedEmail } : {}), ...(name ? { name } : {}), ...(lastUsedAt !== undefined ? { lastUsedAt } : {}) };
    });
  }

  return {
    list,

    async putState(state: string, record: UpstreamState): Promise<void> {
      const fields = Object.entries(record).filter(([, v]) => v !== undefined).flatMap(([k, v]) => [k, String(v)]);
      await store.run(putTtl(), [stateKey(state)], [STATE_TTL_MS, ...fields]);
    },
    /** The state's record without using it up (the redirect URI only looks where it goes). */
    async peekState(state: string): Promise<UpstreamState | undefined> {
      const record = await store.hgetall(stateKey(state));
      return record.upstream ? { ...record, startedAt: Number(record.startedAt) } as unknown as UpstreamState : undefined;
    },
    /** Takes the state's record: an answer is used once. */
    async takeState(state: string): Promise<UpstreamState | undefined> {
      const record = await takeRecord(store, stateKey(state));
      return record ? { ...record, startedAt: Number(record.startedAt) } as unknown as UpstreamState : undefined;
    },

    /** The account linked to this upstream account, if any. */
    owner: (upstream: string, sub: string) => store.get(subKey(upstream, sub)),

    /**
     * Links the upstream account to the account. 'linked' (also when it was
     * already), 'taken' (another account has it) or 'exists' (this account
     * has another account of this upstream linked).
     */
    async link(accountId: string, upstream: string, identity: UpstreamIdentity): Promise<'linked' | 'taken' | 'exists'> {
      const key = subKey(upstream, identity.sub);
      const owner = (await store.run(claim(), [key], [accountId])) as string;
      if (owner !== accountId) return 'taken';
      const now = Date.now();
      const link: Omit<UpstreamLink, 'upstream'> = {
        sub: identity.sub, linkedAt: now, lastUsedAt: now,
        ...(identity.verifiedEmail ? { verifiedEmail: identity.verifiedEmail } : {}), ...(identity.name ? { name: identity.name } : {}),
      };
      if ((await store.run(hsetnx(), [methodKeys(p, accountId).upstreams], [upstream, JSON.stringify(link)])) === 1) return 'linked';
      const [existing] = await store.hmget(methodKeys(p, accountId).upstreams, [upstream]);
      if (existing && (JSON.parse(existing) as UpstreamLink).sub === identity.sub) return 'linked';
      await store.run(release(), [key], [accountId]);
      return 'exists';
    },

    async used(accountId: string, upstream: string): Promise<void> {
      await store.run(recordUpdate(), [methodKeys(p, accountId).upstreams], [upstream, 'lastUsedAt', String(Date.now())]);
    },

    /** A link whose account is gone: the upstream account is free again. */
    forget: (upstream: string, sub: string, accountId: string) => store.run(release(), [subKey(upstream, sub)], [accountId]),

    /** Unlinks it unless it is the account's last way in. */
    async unlink(accountId: string, upstream: string): Promise<RemoveResult> {
      const result = await removeMethod(store, accountId, 'upstream', upstream);
      if ('removed' in result) await store.run(release(), [subKey(upstream, (JSON.parse(result.removed) as UpstreamLink).sub)], [accountId]);
      return result;
    },
  };
}

export type UpstreamLinks = ReturnType<typeof createUpstreamLinks>;
