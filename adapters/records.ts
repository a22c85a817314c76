import type { AdapterPayload } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import { decodeRecordRead } from '../src/store/replies.ts';
import type { Store } from '../src/store/store.ts';
import { decodeMarks, NO_MARKS, unlessEnded, type EndedMarks } from './ended.ts';
import { CREDENTIALS, GRANTABLE, tokenReadKeyParts, withoutId, type AdapterKeys } from './keys.ts';

export const NOT_READ = ['', ''] as const;

/** A stored record as oidc-provider wants it back; a credential's id is put back as its `jti`. */
export function parse(p: string, c: string | null, id?: string): AdapterPayload {
  return withRecordFields(JSON.parse(p) as AdapterPayload, c, id);
}

/** A record's parsed payload with what the hash keeps beside it: its id (credentials) and when it was consumed. */
export function withRecordFields(payload: AdapterPayload, c: string | null, id?: string): AdapterPayload {
  if (id !== undefined) payload.jti = id;
  if (c != null) payload.consumed = Number(c);
  return payload;
}

/**
 * Records as hashes `{ p: payload, c: consumedAt }` with a TTL set in the
 * same step as the write; the grant index and tombstone that revocation
 * relies on; the "ended before" marks a grant or session read applies.
 */
export function createRecords(store: Store, keys: AdapterKeys, lifetimes: { clockTolerance: number; defaultTtl: number }) {
  const ttlMs = (expiresIn: number | undefined) =>
    Math.max(1, Math.round(((expiresIn ?? lifetimes.defaultTtl) + lifetimes.clockTolerance) * 1000));
  const { site: siteKeyParts, person: personKeyParts } = tokenReadKeyParts(store.prefix);

  function read(key: string, id?: string): Promise<AdapterPayload | undefined> {
    return store.hmget(key, ['p', 'c']).then(([p, c]) => (p == null ? undefined : parse(p, c ?? null, id)));
  }

  /** A grant or session with when it was last written (ms; the marks compare within their own second). */
  function readWritten(key: string): Promise<{ payload: AdapterPayload | undefined; writtenAt: number | undefined }> {
    return store.hmget(key, ['p', 'c', 't']).then(([p, c, t]) => ({ payload: p == null ? undefined : parse(p, c ?? null), writtenAt: t == null ? undefined : Number(t) }));
  }

  /** The marks of a person (and a site): on a Cluster they live in slots of their own. */
  function readMarks(accountId: string | undefined, clientId: string | undefined): Promise<EndedMarks> {
    if (!accountId && !clientId) return Promise.resolve(NO_MARKS);
    return Promise.all([
      clientId ? store.hmget(keys.siteEnded(clientId), ['grants']) : undefined,
      accountId ? store.hmget(keys.personEnded(accountId), ['grants', 'sessions', 'keep']) : undefined,
    ]).then(([site, person]) => decodeMarks(site, person));
  }

  /**
   * A grant or a session, unless a mark ended it: one script on a single
   * node (record_read), the record then its marks on a Cluster.
   */
  function readMarked(model: 'Grant' | 'Session', key: string): Promise<AdapterPayload | undefined> {
    if (store.singleNode) {
      const argv = [...(model === 'Grant' ? siteKeyParts : NOT_READ), ...personKeyParts];
      return store.run(commands.recordRead(), [key], argv).then((reply) => {
        const found = decodeRecordRead(reply);
        return found && unlessEnded(model, parse(found.payload, found.consumedAt), decodeMarks(found.siteMark, found.personMark), found.writtenAt);
      });
    }
    return readWritten(key).then(({ payload, writtenAt }) => {
      if (!payload?.accountId) return payload;
      return readMarks(payload.accountId as string, model === 'Grant' ? payload.clientId as string | undefined : undefined)
        .then((marks) => unlessEnded(model, payload, marks, writtenAt));
    });
  }

  /** Writes a record with its TTL, and indexes it under its grant (and account). */
  async function write(model: string, id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const key = keys.record(model, id);
    const ttl = ttlMs(expiresIn);
    const json = JSON.stringify(CREDENTIALS.has(model) ? withoutId(payload) : payload);
    const now = Date.now();

    if (model === 'Grant') {
      const writes: Promise<unknown>[] = [
        // `t`: when, for the "ended before" marks within their own second.
        store.run(commands.guardedUpsert(), [key, keys.grantTombstone(id)], [json, ttl, now]),
      ];
      if (payload.accountId && payload.clientId) {
        writes.push(store.run(commands.indexAdd(), [keys.accountGrants(payload.accountId, payload.clientId)], [id, now + ttl, now]));
      }
      await Promise.all(writes);
      return;
    }

    const session = model === 'Session';
    const writes: Promise<unknown>[] = [store.run(commands.upsert(), [key], session ? [json, ttl, now] : [json, ttl])];
    if (session && payload.uid) {
      writes.push(store.run(commands.upsert(), [keys.sessionUid(payload.uid)], [json, ttl, now]));
    }
    if (payload.userCode) {
      writes.push(store.run(commands.upsert(), [keys.userCode(payload.userCode)], [JSON.stringify(id), ttl]));
    }
    const grantId = GRANTABLE.has(model) ? payload.grantId : undefined;
    if (grantId) {
      writes.push(store.run(
        commands.indexAdd(),
        [keys.grantIndex(grantId), keys.grantTombstone(grantId)],
        [key, now + ttl, now],
      ));
    }
    const results = await Promise.all(writes);
    if (grantId && results.at(-1) === 0) {
      // The grant was revoked while this record was being written: take it back.
      await store.del([key]);
    }
  }

  /** Revokes a grant and everything issued under it; a later write of it is refused (tombstone). */
  async function revokeGrant(grantId: string): Promise<void> {
    const members = (await store.run(
      commands.grantRevoke(),
      [keys.record('Grant', grantId), keys.grantIndex(grantId), keys.grantTombstone(grantId)],
      [ttlMs(0) + 60_000],
    )) as string[];
    await store.del(members);
  }

  /** Live grant ids of one account at one client. */
  async function grantIds(accountId: string, clientId: string): Promise<string[]> {
    const now = Date.now();
    const entries = await store.zentries(keys.accountGrants(accountId, clientId));
    return entries.filter(([, expiresAt]) => expiresAt > now).map(([grantId]) => grantId);
  }

  return { ttlMs, read, readWritten, readMarks, readMarked, write, revokeGrant, grantIds };
}

export type Records = ReturnType<typeof createRecords>;
