import Provider from 'oidc-provider';
import type { AdapterPayload } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import { decodeTokenRead } from '../src/store/replies.ts';
import type { Store } from '../src/store/store.ts';
import { decodeMarks, unlessEnded } from './ended.ts';
import { tokenReadKeyParts, type AdapterKeys } from './keys.ts';
import { NOT_READ, withRecordFields, type Records } from './records.ts';
import type { RequestStates } from './request-state.ts';

/** Routes that read a token's grant right after the token. */
const GRANT_ROUTES = new Set(['introspection', 'token', 'userinfo']);

/** Whether this request goes on to read the token's grant (revocation never does). */
const readsGrant = (ctx: object) => GRANT_ROUTES.has((ctx as { oidc?: { route?: string } }).oidc?.route ?? '');

/** A consumed refresh token's kept answer is looked at by the reuse leeway (leeway.ts). */
export type WithinLeeway = (ctx: object | undefined, id: string, payload: AdapterPayload, sealed: string, unwritten: boolean) => Promise<AdapterPayload | undefined>;

/**
 * Every use of a token reads, after the token, its session (session-bound
 * tokens) and its grant, one after the other. Reading them together with
 * the token (one script, on a single node) or as soon as the token is known
 * (two round trips, on a Cluster, where they live in other hash slots)
 * saves round trips; the reads are handed to the provider's next
 * Session.findByUid / Grant.find in the same request only, once. The marks
 * that may have ended them ride along and are applied before the hand-over.
 */
export function createTokenReads(deps: { store: Store; keys: AdapterKeys; records: Records; states: RequestStates; leewayMs: number; withinLeeway: WithinLeeway }) {
  const { store, keys, records, states } = deps;
  const { session: sessionKeyParts, grant: grantKeyParts, site: siteKeyParts, person: personKeyParts } = tokenReadKeyParts(store.prefix);

  function handOver(ctx: object, key: string, pending: Promise<AdapterPayload | undefined>): void {
    const state = states.of(ctx);
    (state.reads ??= new Map()).set(key, pending);
  }

  /** Cluster: starts the session, grant and mark reads as soon as the token is known. */
  function prefetch(ctx: object, payload: AdapterPayload): void {
    const session = payload.expiresWithSession && payload.sessionUid ? keys.sessionUid(payload.sessionUid as string) : undefined;
    const grant = payload.grantId && readsGrant(ctx) ? keys.record('Grant', payload.grantId) : undefined;
    if (!session && !grant) return;
    const marks = records.readMarks(payload.accountId as string | undefined, payload.clientId as string | undefined);
    const start = (model: 'Grant' | 'Session', key: string) => {
      const pending = Promise.all([records.readWritten(key), marks]).then(([{ payload: record, writtenAt }, m]) => unlessEnded(model, record, m, writtenAt));
      pending.catch(() => {}); // a failed read surfaces when the provider asks for it
      handOver(ctx, key, pending);
    };
    if (session) start('Session', session);
    if (grant) start('Grant', grant);
  }

  /** Single node: the token, its session, its grant and their marks in one script. */
  function readOnOneNode(key: string, id: string, ctx: object | undefined): Promise<AdapterPayload | undefined> {
    const withGrant = ctx !== undefined && readsGrant(ctx);
    const argv = ctx
      ? [...sessionKeyParts, ...(withGrant ? grantKeyParts : NOT_READ), ...siteKeyParts, ...personKeyParts]
      : [...NOT_READ, ...NOT_READ, ...NOT_READ, ...NOT_READ];
    return store.run(commands.tokenRead(), [key], argv).then((reply) => handedOn(reply, id, ctx, withGrant));
  }

  /** The token's payload; its session and grant, unless a mark ended them, are handed on to the same request's next reads. */
  function handedOn(reply: Parameters<typeof decodeTokenRead>[0], id: string, ctx: object | undefined, withGrant: boolean): AdapterPayload | undefined | Promise<AdapterPayload | undefined> {
    const found = decodeTokenRead(reply);
    if (!found) return undefined;
    const payload = withRecordFields(found.payload as AdapterPayload, found.consumedAt, id);
    if (ctx && payload.consumed) states.of(ctx).consumed = payload;
    if (found.answer !== null) return deps.withinLeeway(ctx, id, payload, found.answer, found.unwritten);
    if (ctx) {
      const marks = decodeMarks(found.siteMark, found.personMark);
      if (payload.expiresWithSession && payload.sessionUid) {
        handOver(ctx, keys.sessionUid(payload.sessionUid as string), Promise.resolve(unlessEnded('Session', found.session === null ? undefined : found.session as AdapterPayload, marks, found.sessionWrittenAt)));
      }
      if (withGrant && payload.grantId) {
        handOver(ctx, keys.record('Grant', payload.grantId), Promise.resolve(unlessEnded('Grant', found.grant === null ? undefined : found.grant as AdapterPayload, marks, found.grantWrittenAt)));
      }
    }
    return payload;
  }

  /** Cluster: the token, then (prefetch) its session, grant and marks; a consumed refresh token's kept answer. */
  function readOnCluster(model: string, key: string, id: string, ctx: object | undefined): Promise<AdapterPayload | undefined> {
    return records.read(key, id).then((payload) => {
      if (payload && ctx) prefetch(ctx, payload);
      if (payload?.consumed && ctx) states.of(ctx).consumed = payload;
      // A consumed refresh token: its answer may still be kept (another round trip, on this rare path only).
      if (payload?.consumed && model === 'RefreshToken' && deps.leewayMs > 0 && (ctx as { oidc?: { route?: string } } | undefined)?.oidc?.route === 'token') {
        return Promise.all([store.get(keys.answer(key)), store.hmget(keys.unwritten(key), ['at'])])
          .then(([sealed, [unwritten]]) => (sealed ? deps.withinLeeway(ctx, id, payload, sealed, unwritten != null) : payload));
      }
      return payload;
    });
  }

  return {
    /** A token (a GRANTABLE model) by its value, with what every use of it reads next. Not async: each extra promise costs on the hot path. */
    readToken(model: string, key: string, id: string): Promise<AdapterPayload | undefined> {
      const ctx = Provider.ctx;
      return store.singleNode ? readOnOneNode(key, id, ctx) : readOnCluster(model, key, id, ctx);
    },

    /** A grant or session: the read made with its token in this request, if any (once), else a fresh one. */
    readOnce(key: string, model: 'Grant' | 'Session'): Promise<AdapterPayload | undefined> {
      const reads = states.peek(Provider.ctx)?.reads;
      const pending = reads?.get(key);
      if (pending) {
        reads!.delete(key);
        return pending;
      }
      return records.readMarked(model, key);
    },
  };
}
