import type { Cluster, Redis } from 'ioredis';
import type { Transporter } from 'nodemailer';
import { z } from 'zod';

/** What the host tells the plugin about a person: where letters go and in which language. */
export interface Contact {
  email?: string | undefined;
  locale?: string | undefined;
}

/** Looks up a person's contact details by oidc-provider accountId (the host owns accounts). */
export type ContactLookup = (accountId: string) => Promise<Contact | undefined> | Contact | undefined;

/** Where the plugin writes what it does; it never passes tokens, secrets or codes. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const isRedisClient = (value: unknown): value is Redis | Cluster =>
  typeof value === 'object' && value !== null
  && typeof (value as Redis).evalsha === 'function'
  && typeof (value as Redis).hmget === 'function';

const isTransport = (value: unknown): value is Transporter =>
  typeof value === 'object' && value !== null && typeof (value as Transporter).sendMail === 'function';

const fn = <T>(message: string) => z.custom<T>((v) => typeof v === 'function', { message });

const seconds = z.number().int().positive();

export const optionsSchema = z.object({
  /**
   * ioredis client (Redis, Sentinel or Cluster) the plugin keeps its data in.
   * Omitted: the embedded in-process store, which loses everything on restart
   * (development only; a warning is logged).
   */
  redis: z.custom<Redis | Cluster>(isRedisClient, { message: 'must be an ioredis Redis or Cluster client' }).optional(),
  /** Prefix of every key the plugin writes. No braces: they are Cluster hash tags. */
  keyPrefix: z.string().regex(/^[^{}]*$/, 'must not contain { or }').default('osn:'),
  /** Seconds of clock skew tolerated; also added to every stored record's TTL. */
  clockTolerance: z.number().int().min(0).max(300).default(15),
  /** TTL in seconds for records oidc-provider saves without an expiry. */
  defaultTtl: seconds.default(14 * 24 * 60 * 60),
  /**
   * Hosts (exact hostnames, e.g. `localhost`, `127.0.0.1`) that outgoing
   * requests such as back-channel logout may reach although they resolve to
   * loopback or private addresses, which oidc-provider refuses by default
   * (SSRF protection). For local relying sites and tests; keep it empty in
   * production unless a site really lives on a private network.
   */
  allowPrivateFetchHosts: z.array(z.string().min(1)).default([]),
  /** The service's name as people see it in pages and letters. */
  serviceName: z.string().min(1).max(100).default('Sign-in service'),
  mail: z.object({
    /** A nodemailer transport (pooled SMTP, SES, ...). */
    transport: z.custom<Transporter>(isTransport, { message: 'must be a nodemailer transport' }).optional(),
    /** smtp:// or smtps:// URL, used when no transport is given. */
    smtpUrl: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
    /** The From address of every letter. */
    from: z.string().min(3).default('no-reply@localhost'),
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
  /** POST /api/notify limits (the spec leaves them open; README "Notifications"). */
  notify: z.object({
    /** Requests per site per window, whoever they are for. */
    perClient: z.object({ limit: z.number().int().positive(), windowSeconds: seconds }).strict().prefault({ limit: 1200, windowSeconds: 60 }),
    /** Requests per site per person per window. */
    perPerson: z.object({ limit: z.number().int().positive(), windowSeconds: seconds }).strict().prefault({ limit: 30, windowSeconds: 60 * 60 }),
    /** Messages an inbox keeps; the oldest go first. */
    inboxSize: z.number().int().positive().max(100_000).default(1000),
    /** Days a message stays in the inbox. */
    inboxMaxAgeDays: z.number().int().positive().max(3650).default(180),
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
  }).strict().prefault({}),
  /** accountId -> { email?, locale? }, supplied by the host. */
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
