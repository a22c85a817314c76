import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { PreviousAdapter, PreviousRecordId, RecordSource, RecordSourceInput } from '../../adapters/previous/types.ts';
import { bounded } from './bounded.ts';

export type { PreviousAdapter, PreviousRecordId, RecordSource, RecordSourceInput };

/** Models never looked up in the previous store (docs/upgrading.md: why). */
export const NOT_READ_THROUGH = new Set(['ReplayDetection', 'ClientCredentials']);

const constructable = (fn: unknown): fn is new (model: string) => Adapter =>
  typeof fn === 'function' && fn.prototype !== null && typeof fn.prototype === 'object';

/** Each model's previous adapter, made once (as oidc-provider caches them), each call bounded in time (bounded.ts). */
export function previousModels(previous: PreviousAdapter, timeoutMs: number): (model: string) => Adapter {
  const made = new Map<string, Adapter>();
  return (model) => {
    let adapter = made.get(model);
    if (!adapter) {
      adapter = bounded(constructable(previous) ? new previous(model) : (previous as (model: string) => Adapter)(model), model, timeoutMs);
      made.set(model, adapter);
    }
    return adapter;
  };
}

/** A source of either form as pages. */
export function asRecordSource(input: RecordSourceInput): RecordSource {
  if (typeof input !== 'function') return input;
  return {
    async *pages() {
      let records: PreviousRecordId[] = [];
      for await (const record of input()) {
        records.push(record);
        if (records.length === 500) {
          yield { records, checkpoint: '' };
          records = [];
        }
      }
      if (records.length > 0) yield { records, checkpoint: '' };
    },
  };
}

/** A record of the previous store as it moves: its payload without the consumed mark, when it was consumed, how long it lives on. */
export interface Found {
  payload: AdapterPayload;
  /** Seconds since the epoch. */
  consumedAt: number | undefined;
  /** ms it still lives (plus the clock tolerance); 0 when it has expired. */
  lifetimeMs: number;
}

/**
 * The longest a moved record is kept, whatever its `exp` says (a hand-edited
 * `exp` of 1e17 would overflow Redis' PEXPIRE): past any token's lifetime.
 */
export const MAX_LIFETIME_MS = 100 * 365 * 86_400_000;

/**
 * The example adapters mark a consumed record as a time (Redis: the seconds,
 * as a string) or as `true` (SQL: consumedAt IS NOT NULL); the remaining
 * lifetime comes from the payload's `exp` (the SQL examples keep expired rows),
 * else the plugin's default lifetime for records saved without one.
 */
export function found(payload: AdapterPayload, lifetimes: { clockTolerance: number; defaultTtl: number }, nowMs = Date.now()): Found {
  const { consumed, ...rest } = payload as AdapterPayload & { consumed?: unknown };
  let consumedAt: number | undefined;
  if (consumed !== undefined && consumed !== null && consumed !== false && consumed !== '') {
    const at = Number(consumed);
    consumedAt = Number.isFinite(at) && at > 1 ? Math.floor(at) : Math.floor(nowMs / 1000);
  }
  const left = typeof rest.exp === 'number' ? rest.exp - nowMs / 1000 : lifetimes.defaultTtl;
  const lifetimeMs = left + lifetimes.clockTolerance > 0 ? Math.min(MAX_LIFETIME_MS, Math.round((left + lifetimes.clockTolerance) * 1000)) : 0;
  return { payload: rest as AdapterPayload, consumedAt, lifetimeMs };
}
