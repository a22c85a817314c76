import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

import type { PreviousAdapter, RecordSourceInput } from './adopt/previous.ts';
import type { ConsoleSections, ContactLookup, Logger, MailTransport } from './host.ts';
import { isLocale } from './i18n/index.ts';
import { SECURITY_NOTICE_KINDS, type SecurityNoticeKind, type SignInCheck } from './notify/security-notices.ts';
import { upstreamSignalsOptions } from './upstream-signals-options.ts';

const isRedisClient = (value: unknown): value is Redis | Cluster =>
  typeof value === 'object' && value !== null
  && typeof (value as Redis).evalsha === 'function'
  && typeof (value as Redis).hmget === 'function';

const isTransport = (value: unknown): value is MailTransport =>
  typeof value === 'object' && value !== null && typeof (value as MailTransport).sendMail === 'function';

const fn = <T>(message: string) => z.custom<T>((v) => typeof v === 'function', { message });

const seconds = z.number().int().positive();

/** `securityNotices.signInCheck`: a function, or one sentence (1 to 300 characters) per language the service speaks. */
const isSignInCheck = (value: unknown): value is SignInCheck => typeof value === 'function' || (
  typeof value === 'object' && value !== null && !Array.isArray(value)
  && Object.entries(value).every(([locale, sentence]) => isLocale(locale) && typeof sentence === 'string' && sentence.trim().length > 0 && sentence.length <= 300)
);

/** One switch per security notice kind, each on unless the host turns it off. */
const noticeSwitches = Object.fromEntries(SECURITY_NOTICE_KINDS.map((kind) => [kind, z.boolean().default(true)])) as Record<SecurityNoticeKind, z.ZodDefault<z.ZodBoolean>>;

export const optionsSchema = z.object({
  /**
   * ioredis client (Redis, Sentinel or Cluster) the plugin keeps its data in.
   * Omitted: the embedded in-process store, which loses everything on restart
   * (development only; a warning is logged).
   */
  redis: z.custom<Redis | Cluster>(isRedisClient, { message: 'must be an ioredis Redis or Cluster client' }).optional(),
  /**
   * Milliseconds a request waits on Redis before it is answered
   * `503 temporarily_unavailable` (also the client's `commandTimeout`, unless
   * the host set a shorter one). docs/operations.md "Running in production".
   */
  redisTimeoutMs: z.number().int().min(50).max(30_000).default(1500),
  /**
   * Seconds after a refresh during which the same client presenting the
   * same (now rotated) refresh token gets that refresh's answer again, as
   * long as the token it was given has not been used: the answer was lost
   * (network, timeout, outage). 0 turns it off. Past it, or once the new
   * token was used, the old one is theft and revokes the chain.
   * docs/reuse-leeway.md "Refresh that survives a lost answer".
   */
  refreshReuseLeeway: z.number().int().min(0).max(300).default(60),
  /**
   * Also give the reuse leeway to public sites (`token_endpoint_auth_method:
   * none`), for refresh tokens bound to a DPoP key only (RFC 9449): the retry
   * must prove that key with a fresh DPoP proof. A public site's unbound
   * refresh token proves nothing a thief lacks, and never gets the leeway.
   * Default false: public sites rotate strictly. docs/reuse-leeway.md "Refresh that
   * survives a lost answer".
   */
  publicClientLeeway: z.boolean().default(false),
  /**
   * Seconds within which a site's further uses of its access to a person
   * (refresh, code exchange, userinfo, introspection) are not written again
   * as "Last used": at most one write per site and person per interval in
   * each process. docs/console.md "Last used".
   */
  lastUsedInterval: z.number().int().min(1).max(3600).default(60),
  /**
   * The person is told when a sign-in of theirs was used twice (refresh token
   * or code reuse): an inbox entry and a letter, at most one per person and
   * site per window. docs/security.md "Told when a sign-in was stolen".
   */
  theftNotice: z.object({
    windowSeconds: seconds.max(30 * 24 * 60 * 60).default(24 * 60 * 60),
  }).strict().prefault({}),
  /**
   * The service's security notices to people (docs/security.md "Security
   * notices"): each kind on (the default) or off, and how the host's people
   * sign in, for the letters' "what to check". The theft notice is always on.
   */
  securityNotices: z.object({
    ...noticeSwitches,
    theft: z.literal(true, { message: 'the theft notice cannot be turned off' }).optional(),
    /**
     * What a security letter asks the person to check about how they sign
     * in, in their language: `{ en: 'Check your password manager.', de: ... }`
     * or `(locale) => sentence`. Omitted (or none for a language): the letter
     * names no way of signing in.
     */
    signInCheck: z.custom<SignInCheck>(isSignInCheck, { message: 'must be a function locale => sentence, or one sentence (1 to 300 characters) per language: { en?, de?, fr?, ar? }' }).optional(),
  }).strict().prefault({}),
  /** Prefix of every key the plugin writes, BullMQ's queues included. No braces: they are Cluster hash tags. */
  keyPrefix: z.string().regex(/^[^{}]*$/, 'must not contain { or }').default('osn:'),
  /** Seconds of clock skew tolerated; also added to every stored record's TTL. */
  clockTolerance: z.number().int().min(0).max(300).default(15),
  /** TTL in seconds for records oidc-provider saves without an expiry. */
  defaultTtl: seconds.default(14 * 24 * 60 * 60),
  /**
   * Hosts (exact hostnames, e.g. `localhost`, `127.0.0.1`) that back-channel
   * logout and Shared Signals push may reach although they are loopback or
   * private, which the outbound guards refuse by default (SSRF protection;
   * docs/security.md "Outgoing requests"). For local relying sites and
   * tests; keep it empty in production unless a site really lives on a
   * private network.
   */
  allowPrivateFetchHosts: z.array(z.string().min(1)).default([]),
  /** The service's name as people see it in pages and letters. */
  serviceName: z.string().min(1).max(100).default('Sign-in service'),
  mail: z.object({
    /** A nodemailer transport (pooled SMTP, SES, ...). */
    transport: z.custom<MailTransport>(isTransport, { message: 'must be a nodemailer transport' }).optional(),
    /** smtp:// or smtps:// URL, used when no transport is given. */
    smtpUrl: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
    /** The From address of every letter. */
    from: z.string().min(3).default('no-reply@localhost'),
    /**
     * `'log'`: with neither transport nor smtpUrl, print letters to the log
     * although the issuer is not on loopback (they hold unsubscribe links,
     * and a host's own letters may hold sign-in codes). Without it such a
     * configuration is refused when the plugin is attached.
     */
    outbox: z.literal('log').optional(),
  }).default({ from: 'no-reply@localhost' }),
  /**
   * Organizations whose sites only their members may use. Admins and members
   * are account ids; admins may remove members (console, or `removeMember`),
   * which revokes the member's access to the organization's sites at once.
   */
  organizations: z.array(z.object({
    id: z.string().min(1).max(100).regex(/^[^{}]*$/, 'must not contain { or }'),
    name: z.string().min(1).max(200),
    admins: z.array(z.string().min(1)).default([]),
    members: z.array(z.string().min(1)).default([]),
    clients: z.array(z.string().min(1)).default([]),
  }).strict()).default([]).refine((orgs) => new Set(orgs.map((o) => o.id)).size === orgs.length, 'organization ids must be unique'),
  /** POST /api/notify limits (the spec leaves them open; docs/notifications.md "Notifications". */
  notify: z.object({
    /** Requests per site per window, whoever they are for. */
    perClient: z.object({ limit: z.number().int().positive(), windowSeconds: seconds }).strict().prefault({ limit: 1200, windowSeconds: 60 }),
    /** Requests per site per person per window. */
    perPerson: z.object({ limit: z.number().int().positive(), windowSeconds: seconds }).strict().prefault({ limit: 30, windowSeconds: 60 * 60 }),
    /** Messages an inbox keeps; the oldest go first. */
    inboxSize: z.number().int().positive().max(100_000).default(1000),
    /** Days a message stays in the inbox. */
    inboxMaxAgeDays: z.number().int().positive().max(3650).default(180),
    /** How long an Idempotency-Key names one notification (seconds, from its first use); reused later, it names a new one. */
    idempotencySeconds: seconds.max(7 * 24 * 60 * 60).default(24 * 60 * 60),
  }).strict().prefault({}),
  /** The letter queue (BullMQ on `redis`; in-process in the embedded mode). */
  letters: z.object({
    /** Send letters in this process (false: a separate process calls startLetterWorker()). */
    worker: z.boolean().default(true),
    /** Tries per letter; 4xx answers and network errors are retried, 5xx are not. */
    attempts: z.number().int().min(1).max(50).default(8),
    /** First retry after this many ms, doubling each time. */
    backoffMs: z.number().int().min(10).default(30_000),
    concurrency: z.number().int().min(1).max(100).default(4),
    /** How soon a letter whose worker died is taken up again (ms). */
    stalledIntervalMs: z.number().int().min(100).default(30_000),
    /** Seconds a sent (or skipped) letter's job is kept in the queue; the worker removes older ones. */
    keepCompletedSeconds: z.number().int().min(1).default(24 * 60 * 60),
    /** Seconds a given-up letter's job is kept (to look into); the worker removes older ones. */
    keepFailedSeconds: z.number().int().min(1).default(7 * 24 * 60 * 60),
  }).strict().prefault({}),
  /**
   * Service sessions that end by their lifetime: their sites hear of it
   * (CAEP session-revoked, back-channel logout) from a sweep run where the
   * letters' worker runs (docs/session-expiry.md).
   */
  sessionExpiry: z.object({
    /** How often the sweep looks for sessions that expired (ms): a site hears of one at most this late. */
    sweepEveryMs: z.number().int().min(100).max(60 * 60_000).default(60_000),
  }).strict().prefault({}),
  /**
   * OpenID back-channel logout (docs/backchannel-logout.md): each logout
   * token is tried at once, and, when the site does not answer 200/204, again
   * from the queue (BullMQ on `redis`; in-process in the embedded mode).
   */
  backchannelLogout: z.object({
    /** Tries per logout (the first, right away, included). */
    attempts: z.number().int().min(1).max(50).default(8),
    /**
     * First retry after this many ms, doubling each time. Above the provider's
     * outgoing request timeout (oidc-provider's default 2.5 s), so the first
     * try has ended when the queue takes the logout up.
     */
    backoffMs: z.number().int().min(10).default(10_000),
    /** A logout not delivered this long after the sign-out is given up: the site is "could not be reached". */
    giveUpAfterMs: z.number().int().min(100).default(60 * 60_000),
  }).strict().prefault({}),
  /** The person's console. */
  console: z.object({
    /** Sections of the host's own (e.g. how the person signs in), after the plugin's; see ConsoleSection. */
    sections: fn<ConsoleSections>('must be a function person => sections').optional(),
    /**
     * Seconds since the person's sign-in (the service session's auth time)
     * within which what adds a way into the account (an unblocked site, a
     * passkey, a linked account, a host section's action that asks through
     * `recentSignIn`) is done at once; past them the person signs in again
     * first. docs/security.md "A recent sign-in for what adds access".
     */
    recentSignInSeconds: seconds.max(24 * 60 * 60).default(300),
  }).strict().prefault({}),
  /**
   * The host's oidc-provider `adapter` before the plugin (a class, or a factory
   * `model => Adapter`), to take over its sessions, grants and tokens with
   * nobody signed out: while the adoption window is open, a record the
   * plugin's store lacks is looked up there once and moved in.
   * docs/upgrading.md "Taking over from your previous adapter".
   */
  previousAdapter: fn<PreviousAdapter>('must be the previous oidc-provider adapter: a class or a factory model => Adapter').optional(),
  /** The adoption window and the previous store's listing (with `previousAdapter`). */
  adoption: z.object({
    /** When the read-through stops at the latest (a Date, an ISO date or ms since the epoch); it stops sooner when the import finishes. */
    closesAt: z.coerce.date().optional(),
    /**
     * Where the previous store's records are listed (a RecordSource, e.g.
     * `exampleRedisRecords` from `oidc-signout-notify/adopt`, or a function
     * returning an async iterable of `{ model, id }`): the import's default,
     * and how deleteAccount finds a person's records there.
     */
    records: z.custom<RecordSourceInput>((v) => typeof v === 'function' || (typeof v === 'object' && v !== null && typeof (v as { pages?: unknown }).pages === 'function'), { message: 'must be a RecordSource or a function returning an async iterable of { model, id }' }).optional(),
    /** How often (ms) a process asks the store whether the import finished, at most; only a miss asks. */
    checkEveryMs: z.number().int().min(100).max(60 * 60_000).default(10_000),
  }).strict().prefault({}),
  /**
   * Hearing upstream identity providers (docs/upstream-signals.md): Shared
   * Signals and RISC events they push to `/upstream-signals/<id>` (RFC 8935)
   * or that are polled (RFC 8936), and Global Token Revocation. Off until
   * `upstreams` lists one.
   */
  upstreamSignals: upstreamSignalsOptions,
  /** accountId -> { email?, locale?, name? }, supplied by the host. */
  contacts: fn<ContactLookup>('must be a function accountId => { email?, locale? }'),
  logger: z.custom<Logger>(
    (v) => typeof v === 'object' && v !== null && ['info', 'warn', 'error'].every((k) => typeof (v as Record<string, unknown>)[k] === 'function'),
    { message: 'must have info, warn and error functions' },
  ).optional(),
}).strict();

export type SignoutNotifyOptions = z.input<typeof optionsSchema>;
export type ResolvedOptions = z.output<typeof optionsSchema>;

/** Validates options; the error names the first bad option by its path. */
export function resolveOptions(input: unknown): ResolvedOptions {
  const result = optionsSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.join('.') || '(options)';
    throw new TypeError(`oidc-signout-notify: invalid option "${path}": ${issue.message}`);
  }
  return result.data;
}
