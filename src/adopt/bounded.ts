import type { Adapter, AdapterPayload } from 'oidc-provider';

import { StoreUnavailableError } from '../store/availability.ts';

/**
 * A record the previous store answered but that is not one oidc-provider
 * wrote: not JSON, not an object, or another model's (`kind`). The host's
 * data, damaged or edited by hand: it is left where it is, never moved, and
 * read as not found (a request gets the answer for an unknown token, the
 * import counts it `unreadable` and finishes).
 */
export class UnreadableRecordError extends Error {
  readonly model: string;

  constructor(model: string, reason: string) {
    super(`previous store: a ${model} record it holds cannot be read (${reason})`);
    this.model = model;
  }
}

const LOOKUPS = new Set(['find', 'findByUid', 'findByUserCode']);

/** What a lookup found, when it is a record of this model. */
function record(model: string, found: unknown): AdapterPayload | undefined {
  if (found === undefined || found === null) return undefined;
  if (typeof found !== 'object' || Array.isArray(found)) throw new UnreadableRecordError(model, `a ${Array.isArray(found) ? 'list' : typeof found}`);
  const { kind } = found as { kind?: unknown };
  if (kind !== undefined && kind !== model) throw new UnreadableRecordError(model, 'another model\'s kind');
  return found as AdapterPayload;
}

/**
 * Every call to the previous store bounded in time (the plugin's
 * redisTimeoutMs), as a call to the plugin's own Redis is: one that fails or
 * does not answer in time is StoreUnavailableError (a request answers 503, the
 * import counts it failed), never "not found"; one that answered with what
 * cannot be a record is UnreadableRecordError. A JSON.parse that failed inside
 * the host's adapter (SyntaxError) is the store's answer, not its absence.
 */
export function bounded(adapter: Adapter, model: string, timeoutMs: number): Adapter {
  const call = (method: keyof Adapter, args: unknown[]): Promise<unknown> => {
    // The contract's optional lookups (findByUid, findByUserCode) a host's adapter may lack: nothing found.
    if (typeof adapter[method] !== 'function') return Promise.resolve(undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError('previous store: no answer')), timeoutMs);
    });
    const answer = Promise.resolve().then(() => (adapter[method] as (...a: unknown[]) => unknown).apply(adapter, args));
    return Promise.race([answer, late])
      .then((found) => (LOOKUPS.has(method) ? record(model, found) : found), (err: unknown) => {
        if (err instanceof StoreUnavailableError) throw err;
        if (err instanceof SyntaxError) throw new UnreadableRecordError(model, 'not JSON');
        throw new StoreUnavailableError(`previous store: ${(err as Error)?.message ?? String(err)}`.slice(0, 200));
      })
      .finally(() => clearTimeout(timer));
  };
  const methods = ['upsert', 'find', 'findByUid', 'findByUserCode', 'destroy', 'revokeByGrantId', 'consume'] as const;
  return Object.fromEntries(methods.map((method) => [method, (...args: unknown[]) => call(method, args)])) as unknown as Adapter;
}
