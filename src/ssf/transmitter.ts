import { randomBytes } from 'node:crypto';

import type { SharedSignalsEvent } from '../events.ts';
import type { ContactLookup, Logger } from '../host.ts';
import { negotiateLocale, type Locale } from '../i18n/index.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';
import * as commands from '../store/commands.ts';
import * as ssfScripts from './scripts.ts';
import type { Store } from '../store/store.ts';
import { EVENT_TYPES, requestedTypeOf } from './event-types.ts';
import { OutboundRefused } from './outbound-guard.ts';
import { createPusher, setErrorCode } from './push.ts';
import type { SsfQueue, SsfJob } from './set-queue.ts';
import { setClaims, type Signal } from './signal.ts';
import { PUSH, type Stream, type Streams } from './streams.ts';

export interface TransmitterDeps {
  store: Store;
  streams: Streams;
  queue: SsfQueue;
  sites: ConnectedSites;
  contacts: ContactLookup;
  logger: Logger;
  /** The provider's issuer, once known (attached, or a worker's provider). */
  issuer: () => string | undefined;
  /** The subject the site knows the person by (pairwise included), as in its ID tokens. */
  subject: (accountId: string, clientId: string) => Promise<string | undefined>;
  sign: (claims: Record<string, unknown>) => Promise<string>;
  limits: { heldMax: number; heldTtlMs: number; pollMax: number; pollTtlMs: number; pushTimeoutMs: number };
  /** Hosts a push may reach over http or on a private address (the plugin's allowPrivateFetchHosts). */
  allowPrivateFetchHosts: readonly string[];
  /** Tries per SET (the queue's): the last failed one is `failed`, the others `retry`. */
  attempts: number;
  /** Told of each try's end at each site (the plugin's SHARED_SIGNALS_EVENT). */
  emit: (event: SharedSignalsEvent) => void;
}

/** A receiver's answer that it refused the SET (RFC 8935 section 2.3): not tried again. */
class RefusedError extends Error {}

/** A cause as its place in the code tells it (txn and time filled in). */
export type SignalInput = Omit<Signal, 'txn' | 'at'> & { txn?: string | undefined; at?: number | undefined };

/** Where a cause is told from: queues it, never throws (a failure is logged). */
export type Signaller = (signal: SignalInput) => Promise<void>;

/** A random txn for a cause (shared by its SETs at every site). */
export const newTxn = () => randomBytes(16).toString('base64url');

/**
 * The Shared Signals transmitter's domain: a cause becomes one queued job
 * (one write, after the cause's own), the worker fans it out into one signed
 * SET per site that has a stream asking for the event, and delivers each by
 * push, or keeps it for the receiver's poll, or holds it while the stream is
 * paused. Only sites the person is connected to hear of them.
 */
export function createTransmitter(deps: TransmitterDeps) {
  const { store, streams, queue, sites, logger, limits } = deps;
  const keys = streams.keys;
  const send = createPusher({ allowedHosts: deps.allowPrivateFetchHosts, timeoutMs: limits.pushTimeoutMs });

  async function localeOf(accountId: string): Promise<Locale | undefined> {
    const contact = await Promise.resolve(deps.contacts(accountId)).catch(() => undefined);
    return contact?.locale ? negotiateLocale({ preferred: contact.locale }) : undefined;
  }

  /** The sites a cause goes to: those it names, or every connected one; only sites the person signed in to. */
  async function targetsOf(signal: Pick<Signal, 'accountId' | 'clientIds'>): Promise<string[]> {
    const connected = await sites.list(signal.accountId);
    return (signal.clientIds
      ? connected.filter((site) => signal.clientIds!.includes(site.clientId))
      : connected.filter((site) => site.status === 'connected')).map((site) => site.clientId);
  }

  /** Fans a cause out into one SET per site's stream. */
  async function fanOut(signal: Signal): Promise<void> {
    const issuer = deps.issuer();
    if (!issuer) throw new Error('the provider is not known yet');
    const targets = signal.resolved?.targets ?? (await targetsOf(signal)).map((clientId) => ({ clientId, sub: undefined }));
    let locale: Promise<Locale | undefined> | undefined = signal.resolved ? Promise.resolve(signal.resolved.locale) : undefined;
    await Promise.all(targets.map(async ({ clientId, sub: known }) => {
      const stream = await streams.get(clientId);
      const type = stream && stream.status !== 'disabled' ? requestedTypeOf(signal.kind, stream.events_requested, issuer) : undefined;
      if (!type) return;
      const sub = known ?? await deps.subject(signal.accountId, clientId);
      if (!sub) return;
      const claims = setClaims(signal, { issuer, clientId, sub, type, locale: await (locale ??= localeOf(signal.accountId)), now: Date.now() });
      await queue.add({ kind: 'set', id: claims.jti as string, clientId, set: await deps.sign(claims) });
    }));
  }

  async function push(stream: Stream, set: string): Promise<void> {
    const { endpoint_url: url, authorization_header: authorization } = stream.delivery;
    const res = await send(url!, { 'content-type': 'application/secevent+jwt', accept: 'application/json', ...(authorization ? { authorization } : {}) }, set);
    if (res.status === 202 || res.status === 200 || res.status === 204) return;
    if (res.status === 400) throw new RefusedError(`refused: ${res.err ?? 'other'}`);
    throw new Error(`receiver answered ${res.status}`);
  }

  /** Delivers one SET as its stream says now: push, keep for the poll, hold while paused, drop when disabled or gone. */
  async function deliver(clientId: string, jti: string, set: string, attempt: number): Promise<SharedSignalsEvent['outcome']> {
    const stream = await streams.get(clientId);
    if (!stream || stream.status === 'disabled') return 'dropped';
    if (stream.status === 'paused') {
      const kept = await store.run(ssfScripts.ssfBufferAdd(), [keys.held(clientId)], [limits.heldMax, limits.heldTtlMs, jti, set]);
      if (kept === 1) return 'held';
      logger.warn('security event dropped: the paused stream holds as many as it may', { clientId });
      return 'dropped';
    }
    if (stream.delivery.method !== PUSH) {
      const kept = await store.run(ssfScripts.ssfBufferAdd(), [keys.poll(clientId)], [limits.pollMax, limits.pollTtlMs, jti, set]);
      if (kept === 1) return 'kept';
      logger.warn('security event dropped: the receiver has not polled the ones waiting', { clientId });
      return 'dropped';
    }
    try {
      await push(stream, set);
      logger.info('security event delivered', { clientId, attempt });
      return 'sent';
    } catch (err) {
      const reason = (err as Error).message;
      if (err instanceof RefusedError) {
        logger.warn('security event refused by the receiver', { clientId, reason });
        deps.emit({ clientId, outcome: 'refused', attempt, reason });
        return 'refused';
      }
      if (err instanceof OutboundRefused) {
        logger.warn('security event not pushed: the endpoint is not allowed', { clientId, reason });
        deps.emit({ clientId, outcome: 'refused', attempt, reason });
        return 'refused';
      }
      // The queue logs the retry or the giving up; the host is told which.
      deps.emit({ clientId, outcome: attempt >= deps.attempts ? 'failed' : 'retry', attempt, reason });
      throw err;
    }
  }

  /** Queues a cause (one write); the worker tells the sites. Never throws into the cause's path: a failure is logged. */
  async function signal(input: SignalInput): Promise<void> {
    const full: Signal = { ...input, txn: input.txn ?? newTxn(), at: input.at ?? Date.now() };
    await queue.add({ kind: 'signal', id: `${full.txn}.${full.kind}`, signal: full }).catch((err: Error) => {
      logger.error('security event not queued', { kind: full.kind, reason: err.message });
    });
  }

  return {
    signal,

    /**
     * As signal(), with the sites, subjects and language read now (before the
     * person's records go): for account-purged, which plugin.deleteAccount sends.
     */
    async signalNow(input: SignalInput): Promise<void> {
      const clientIds = await targetsOf(input);
      const [subs, locale] = await Promise.all([Promise.all(clientIds.map((clientId) => deps.subject(input.accountId, clientId))), localeOf(input.accountId)]);
      const targets = clientIds.flatMap((clientId, i) => (subs[i] ? [{ clientId, sub: subs[i] }] : []));
      await signal({ ...input, resolved: { targets, locale } });
    },

    /** A verification SET (SSF 1.0 section 8.1.4.2) for the stream, with the receiver's state. */
    async verify(stream: Stream, state: string | undefined): Promise<'queued' | 'too_soon'> {
      const issuer = deps.issuer()!;
      const [allowed] = await store.run(commands.rateLimit(), [keys.verified(stream.clientId)], [1, stream.min_verification_interval * 1000]) as [number];
      if (allowed !== 1) return 'too_soon';
      const jti = randomBytes(16).toString('base64url');
      const set = await deps.sign({
        iss: issuer, aud: stream.clientId, iat: Math.floor(Date.now() / 1000), jti,
        sub_id: { format: 'opaque', id: stream.stream_id },
        events: { [EVENT_TYPES.verification]: state === undefined ? {} : { state } },
      });
      await queue.add({ kind: 'set', id: jti, clientId: stream.clientId, set });
      return 'queued';
    },

    /** After a paused stream is enabled again: what it held is queued for delivery. */
    async release(clientId: string): Promise<void> {
      const taken = await store.run(ssfScripts.ssfBufferTake(), [keys.held(clientId)], []) as string[];
      for (let i = 0; i + 1 < taken.length; i += 2) {
        await queue.add({ kind: 'set', id: `${taken[i]}.released.${Date.now()}`, clientId, set: taken[i + 1]! });
      }
    },

    /** The worker's step for one job (`attempt`: which try, the first is 1); each SET's outcome is emitted. */
    async process(job: SsfJob, attempt = 1): Promise<void> {
      if (job.kind === 'signal') return fanOut(job.signal);
      const outcome = await deliver(job.clientId, job.id.split('.', 1)[0]!, job.set, attempt);
      if (outcome !== 'refused') deps.emit({ clientId: job.clientId, outcome, attempt });
    },

    /** The receiver's poll (RFC 8936): acknowledges, then returns up to maxEvents kept SETs. */
    async poll(clientId: string, request: { ack: string[]; setErrs: Record<string, { err: string; description?: string | undefined }>; maxEvents: number }): Promise<{ sets: Record<string, string>; moreAvailable: boolean }> {
      const done = [...request.ack, ...Object.keys(request.setErrs)];
      const refused = Object.values(request.setErrs);
      // One line per poll, however many it reports: the codes counted, never the receiver's jtis or words.
      if (refused.length > 0) {
        const codes: Record<string, number> = {};
        for (const { err } of refused) codes[setErrorCode(err)] = (codes[setErrorCode(err)] ?? 0) + 1;
        logger.warn('security events refused by the receiver', { clientId, count: refused.length, codes });
      }
      if (done.length > 0) await store.run(commands.hdel(), [keys.poll(clientId)], done);
      const all = Object.entries(await store.hgetall(keys.poll(clientId)));
      return { sets: Object.fromEntries(all.slice(0, request.maxEvents)), moreAvailable: all.length > request.maxEvents };
    },
  };
}

export type Transmitter = ReturnType<typeof createTransmitter>;
