/**
 * Baseline (B) adapter: oidc-provider's own in-memory adapter
 * (lib/adapters/memory_adapter.js, 9.13) with its LRU of 1,000 entries
 * replaced by an unbounded Map. Same semantics otherwise: payloads kept by
 * reference, a grant index per grant, secondary indexes for session uid and
 * user code, expiry on read (KNOWN-TRAPS item 1: the built-in one silently
 * drops tokens past 1,000 entries, so introspection would measure misses).
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';

const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/** key -> (key -> expiresAt ms) for grant indexes, or a payload, or an id (secondary indexes). */
type Value = AdapterPayload | Map<string, number> | string;

interface Entry {
  value: Value;
  expiresAt: number;
}

/** An unbounded key-value map with per-entry expiry, checked on read and swept now and then. */
export class ExpiringMap {
  readonly #entries = new Map<string, Entry>();
  readonly #sweep: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.#sweep = setInterval(() => this.sweep(), sweepEveryMs);
    this.#sweep.unref();
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Value | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: Value, maxAgeMs?: number): void {
    this.#entries.set(key, { value, expiresAt: maxAgeMs === undefined ? Infinity : Date.now() + maxAgeMs });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }

  close(): void {
    clearInterval(this.#sweep);
    this.#entries.clear();
  }
}

const grantKey = (id: string) => `grant:${id}`;
const sessionUidKey = (uid: string) => `sessionUid:${uid}`;
const userCodeKey = (code: string) => `userCode:${code}`;

function grantMembers(store: ExpiringMap, grantId: string): Map<string, number> {
  const stored = store.get(grantKey(grantId));
  return stored instanceof Map ? stored : new Map();
}

function setGrantMembers(store: ExpiringMap, grantId: string, members: Map<string, number>): void {
  const now = Date.now();
  let latest = 0;
  for (const [key, expiresAt] of members) {
    if (expiresAt <= now) members.delete(key);
    else latest = Math.max(latest, expiresAt);
  }
  if (members.size === 0) {
    store.delete(grantKey(grantId));
    return;
  }
  store.set(grantKey(grantId), members, Number.isFinite(latest) ? latest - now : undefined);
}

function removeSecondaryIndexes(store: ExpiringMap, id: string, payload: AdapterPayload): void {
  if (payload.uid && store.get(sessionUidKey(payload.uid)) === id) store.delete(sessionUidKey(payload.uid));
  if (payload.userCode && store.get(userCodeKey(payload.userCode)) === id) store.delete(userCodeKey(payload.userCode));
}

class UnboundedMemoryAdapter implements Adapter {
  readonly model: string;
  readonly #store: ExpiringMap;
  readonly #clockTolerance: number;

  constructor(model: string, store: ExpiringMap, clockTolerance: number) {
    this.model = model;
    this.#store = store;
    this.#clockTolerance = clockTolerance;
  }

  #key(id: string): string {
    return `${this.model}:${id}`;
  }

  #payload(key: string): AdapterPayload | undefined {
    const value = this.#store.get(key);
    return typeof value === 'object' && !(value instanceof Map) ? value : undefined;
  }

  #removeIndexes(id: string, key: string, payload: AdapterPayload): void {
    removeSecondaryIndexes(this.#store, id, payload);
    if (GRANTABLE.has(this.model) && payload.grantId) {
      const members = grantMembers(this.#store, payload.grantId);
      members.delete(key);
      setGrantMembers(this.#store, payload.grantId, members);
    }
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const key = this.#key(id);
    const maxAge = typeof expiresIn === 'number' ? (expiresIn + this.#clockTolerance) * 1000 : undefined;
    const previous = this.#payload(key);
    if (previous) this.#removeIndexes(id, key, previous);
    if (this.model === 'Session' && payload.uid) this.#store.set(sessionUidKey(payload.uid), id, maxAge);
    if (GRANTABLE.has(this.model) && payload.grantId) {
      const members = grantMembers(this.#store, payload.grantId);
      members.set(key, maxAge === undefined ? Infinity : Date.now() + maxAge);
      setGrantMembers(this.#store, payload.grantId, members);
    }
    if (payload.userCode) this.#store.set(userCodeKey(payload.userCode), id, maxAge);
    this.#store.set(key, payload, maxAge);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.#payload(this.#key(id));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = this.#store.get(sessionUidKey(uid));
    return typeof id === 'string' ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = this.#store.get(userCodeKey(userCode));
    return typeof id === 'string' ? this.find(id) : undefined;
  }

  async consume(id: string): Promise<void> {
    const payload = this.#payload(this.#key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    const key = this.#key(id);
    const payload = this.#payload(key);
    this.#store.delete(key);
    if (payload) this.#removeIndexes(id, key, payload);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const members = grantMembers(this.#store, grantId);
    for (const key of members.keys()) {
      const payload = this.#payload(key);
      this.#store.delete(key);
      if (payload) removeSecondaryIndexes(this.#store, payload.jti ?? key.slice(key.indexOf(':') + 1), payload);
    }
    this.#store.delete(grantKey(grantId));
  }
}

/** The `adapter` configuration for B, and its storage (to count and close it). */
export function unboundedMemoryAdapter(clockTolerance = 0): { factory: (model: string) => Adapter; store: ExpiringMap } {
  const store = new ExpiringMap();
  return { factory: (model: string) => new UnboundedMemoryAdapter(model, store, clockTolerance), store };
}
