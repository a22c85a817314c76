import { randomBytes } from 'node:crypto';

import * as ssfScripts from './scripts.ts';
import type { Store } from '../store/store.ts';

export const PUSH = 'urn:ietf:rfc:8935';
export const POLL = 'urn:ietf:rfc:8936';

export type StreamStatus = 'enabled' | 'paused' | 'disabled';

/** How a stream's events reach the receiver (SSF 1.0 section 8.1.1). */
export interface Delivery {
  method: typeof PUSH | typeof POLL;
  /** Push: the receiver's endpoint. Poll: the transmitter's poll endpoint (set by the service). */
  endpoint_url?: string | undefined;
  /** Push only: the Authorization header value sent with each SET; never shown back. */
  authorization_header?: string | undefined;
}

/** What a receiver may set on its stream. */
export interface StreamSettings {
  events_requested: string[];
  delivery: Delivery;
  description?: string | undefined;
  /** Seconds between two verification requests the receiver may make. */
  min_verification_interval: number;
}

/** A site's stream as kept: one per site (a second create is 409). */
export interface Stream extends StreamSettings {
  stream_id: string;
  clientId: string;
  status: StreamStatus;
  reason?: string | undefined;
}

/** The default (and least) seconds between verification requests. */
export const DEFAULT_MIN_VERIFICATION_INTERVAL = 30;

/**
 * Key layout of Shared Signals (docs/redis-keys.md): each site's keys share
 * its hash tag. The stream is the site's configuration (no TTL); the held
 * and polled events expire.
 */
export function ssfKeys(prefix: string) {
  return {
    stream: (clientId: string) => `${prefix}ssf:{${clientId}}:stream`,
    held: (clientId: string) => `${prefix}ssf:{${clientId}}:held`,
    poll: (clientId: string) => `${prefix}ssf:{${clientId}}:poll`,
    verified: (clientId: string) => `${prefix}ssf:{${clientId}}:verified`,
    polls: (clientId: string) => `${prefix}ssf:{${clientId}}:polls`,
  };
}

function fields(settings: StreamSettings, extra: Record<string, string>): string[] {
  const out: Record<string, string> = {
    ...extra,
    events_requested: JSON.stringify(settings.events_requested),
    delivery: JSON.stringify(settings.delivery),
    min_verification_interval: String(settings.min_verification_interval),
    ...(settings.description !== undefined ? { description: settings.description } : {}),
  };
  return Object.entries(out).flat();
}

function parse(clientId: string, hash: Record<string, string>): Stream | undefined {
  if (!hash.stream_id) return undefined;
  return {
    stream_id: hash.stream_id,
    clientId,
    status: (hash.status ?? 'enabled') as StreamStatus,
    ...(hash.reason ? { reason: hash.reason } : {}),
    events_requested: JSON.parse(hash.events_requested ?? '[]') as string[],
    delivery: JSON.parse(hash.delivery ?? '{}') as Delivery,
    ...(hash.description !== undefined ? { description: hash.description } : {}),
    min_verification_interval: Number(hash.min_verification_interval ?? DEFAULT_MIN_VERIFICATION_INTERVAL),
  };
}

/** The sites' streams in the store. */
export function createStreams(store: Store) {
  const keys = ssfKeys(store.prefix);
  return {
    keys,
    async get(clientId: string): Promise<Stream | undefined> {
      return parse(clientId, await store.hgetall(keys.stream(clientId)));
    },
    /** Creates the site's stream; undefined when it has one already. */
    async create(clientId: string, settings: StreamSettings): Promise<Stream | undefined> {
      const streamId = randomBytes(16).toString('base64url');
      const written = await store.run(ssfScripts.ssfStreamPut(), [keys.stream(clientId)], ['create', '', ...fields(settings, { stream_id: streamId, status: 'enabled' })]);
      return written === 1 ? { stream_id: streamId, clientId, status: 'enabled', ...settings } : undefined;
    },
    /**
     * Sets the given settings (PATCH: `settings` already holds the stream's
     * others) or all of them (PUT: what it lacks is gone) of the stream with
     * that id. Returns the stream as now stored; undefined when there is none.
     */
    async change(clientId: string, stream: Stream, settings: StreamSettings, replace: boolean): Promise<Stream | undefined> {
      // A replace writes the hash anew: the id and status go with it (an update leaves them alone).
      const base: Record<string, string> = replace ? { stream_id: stream.stream_id, status: stream.status, ...(stream.reason ? { reason: stream.reason } : {}) } : {};
      const written = await store.run(ssfScripts.ssfStreamPut(), [keys.stream(clientId)], [replace ? 'replace' : 'update', stream.stream_id, ...fields(settings, base)]);
      if (written !== 1) return undefined;
      const { description: _dropped, ...kept } = stream;
      return { ...(replace ? kept : stream), ...settings };
    },
    async setStatus(clientId: string, streamId: string, status: StreamStatus, reason: string | undefined): Promise<boolean> {
      const written = await store.run(ssfScripts.ssfStreamPut(), [keys.stream(clientId)], ['update', streamId, 'status', status, 'reason', reason ?? '']);
      return written === 1;
    },
    /** Drops what a stream held while paused (it was disabled). */
    async dropHeld(clientId: string): Promise<void> {
      await store.del([keys.held(clientId)]);
    },
    /** Deletes the stream and every event kept for it. */
    async remove(clientId: string): Promise<void> {
      await store.del([keys.stream(clientId), keys.held(clientId), keys.poll(clientId), keys.verified(clientId)]);
    },
  };
}

export type Streams = ReturnType<typeof createStreams>;
