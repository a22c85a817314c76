import { hash } from 'node:crypto';

import Provider, { errors } from 'oidc-provider';
import type { Adapter, AdapterPayload, KoaContextWithOIDC } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import { decodeMarks, NO_MARKS, unlessEnded, type EndedMarks } from './ended.ts';
import { proofMatches } from './dpop-proof.ts';
import { open, seal } from './sealed-answer.ts';
import { endedKeys } from '../src/store/ended-keys.ts';
import { keyAround, type Store } from '../src/store/store.ts';

/** Models whose records carry a grantId and die with their grant. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/**
 * Models whose id is a bearer credential a client holds (the token value of
 * opaque tokens and codes). They are stored under a SHA-256 of the id, and
 * the id (`jti`) is left out of the stored payload: whoever reads Redis, a
 * replica, MONITOR or a backup does not hold live tokens.
 */
const CREDENTIALS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'PreAuthorizedCode',
  'RegistrationAccessToken',
  'InitialAccessToken',
]);

/** The key name part of a credential: SHA-256, base64url (43 characters); one-shot, half the cost of createHash. */
const digest = (id: string) => hash('sha256', id, 'base64url');

/** A credential's payload without its id, which is the credential itself. */
function withoutId(payload: AdapterPayload): AdapterPayload {
  const { jti: _jti, ...rest } = payload;
  return rest;
}

/** Routes that read a token's grant right after the token. */
const GRANT_ROUTES = new Set(['introspection', 'token', 'userinfo']);

export interface ReplayEvent {
  /** Model of the record presented a second time (RefreshToken, AuthorizationCode, ...). */
  model: string;
  grantId?: string;
  clientId?: string;
  accountId?: string;
}

/** A refresh's answer given again within the reuse leeway (no token material). */
export interface AnswerAgainEvent {
  clientId: string;
  grantId?: string | undefined;
  /** Seconds since the rotation whose answer was given again. */
  ageSeconds: number;
}

export interface StoreAdapterOptions {
  /**
   * Seconds added to every record's lifetime so that a token the provider
   * still accepts under its own `clockTolerance` is still found. Default 15.
   */
  clockTolerance?: number;
  /**
   * Lifetime in seconds for records saved without one (oidc-provider passes
   * none for some models, e.g. dynamically registered clients). Every key
   * expires: there is no "forever". Default 14 days.
   */
  defaultTtl?: number;
  /**
   * Seconds after a refresh during which the same client presenting the same
   * refresh token again gets that refresh's answer again, while the refresh
   * token it was given is unused (the answer never reached it). 0: off.
   * Default 60 (README "Refresh that survives a lost answer"). The answer is
   * kept by `flush()`, so the adapter alone (without the plugin's token
   * endpoint step, `attach()`) rotates strictly. Confidential clients only,
   * unless {@link publicClientLeeway}.
   */
  refreshReuseLeeway?: number;
  /**
   * Also give the leeway to public clients (`token_endpoint_auth_method:
   * none`), for refresh tokens bound to a DPoP key (RFC 9449) only, and only
   * to a retry that proves that key with a fresh DPoP proof. A public
   * client's unbound refresh token proves nothing a thief lacks: it never
   * gets the leeway. Default false.
   */
  publicClientLeeway?: boolean;
  /** Called each time a refresh's answer is given again within the leeway. */
  onAnswerAgain?: (event: AnswerAgainEvent, ctx?: object) => void;
  /**
   * Called when a consumed refresh token or authorization code is presented
   * again in a race the provider could not see (two requests at once). The
   * grant has been revoked already when this runs. `ctx` is the token
   * request's context, when known.
   */
  onReplay?: (event: ReplayEvent, ctx?: object) => void;
}

/** Key layout; documented in the README ("Redis keys"). */
export function adapterKeys(prefix: string) {
  return {
    record: (model: string, id: string) => `${prefix}${model}:{${CREDENTIALS.has(model) ? digest(id) : id}}`,
    sessionUid: (uid: string) => `${prefix}Session:uid:{${uid}}`,
    userCode: (code: string) => `${prefix}DeviceCode:userCode:{${code}}`,
    grantIndex: (grantId: string) => `${prefix}Grant:{${grantId}}:records`,
    grantTombstone: (grantId: string) => `${prefix}Grant:{${grantId}}:revoked`,
    /** A refresh's answer, kept for the reuse leeway beside the refresh token it consumed. */
    answer: (recordKey: string) => `${recordKey}:answer`,
    /** Recorded when that refresh's new tokens were never written: only then may a retry rotate again. */
    unwritten: (recordKey: string) => `${recordKey}:unwritten`,
    /** A site's "ended before" mark (endSiteAccess): hash { grants }. */
    siteEnded: endedKeys(prefix).site,
    /** A person's "ended before" mark (endAccountAccess, sign out everywhere): hash { grants, sessions, keep }. */
    personEnded: endedKeys(prefix).person,
    accountGrants: (accountId: string, clientId: string) => `${prefix}account:{${accountId}}:grants:${clientId}`,
  };
}

/**
 * token_read builds a token's session and grant keys from its record: it gets
 * their text before and after the id, so the layout stays in adapterKeys alone.
 */
export function tokenReadKeyParts(prefix: string): { session: [string, string]; grant: [string, string]; site: [string, string]; person: [string, string] } {
  const keys = adapterKeys(prefix);
  return {
    session: keyAround(keys.sessionUid),
    grant: keyAround((id) => keys.record('Grant', id)),
    site: keyAround(keys.siteEnded),
    person: keyAround(keys.personEnded),
  };
}

/** A site's "last used" (site_used.lua): the person's connected sites key, the site, when. */
export interface SiteUse {
  sites: string;
  clientId: string;
  at: number;
}

export interface StoreAdapter {
  /** Pass as oidc-provider's `adapter` configuration. */
  factory: (model: string) => Adapter;
  /** Revokes a grant and everything issued under it; a later write of it is refused. */
  revokeGrant(grantId: string): Promise<void>;
  /** Live grant ids of one account at one client. */
  grantIds(accountId: string, clientId: string): Promise<string[]>;
  /** Revokes every grant of one account at one client; returns the grant ids. */
  revokeAccountGrants(accountId: string, clientId: string): Promise<string[]>;
  /**
   * Ends every grant of the site issued up to now, for every person, in one
   * write (a mark the reads compare with; nothing is enumerated). Returns the
   * mark (seconds since the epoch).
   */
  endSiteGrants(clientId: string): Promise<number>;
  /** Ends every grant of the person issued up to now, at every site, in one write. Returns the mark. */
  endAccountGrants(accountId: string): Promise<number>;
  /**
   * Ends every service session of the person signed in up to now, however
   * many, but the one whose uid is `keep`, in one write: their session-bound
   * tokens end with them. Returns the mark.
   */
  endAccountSessions(accountId: string, keep?: string): Promise<number>;
  /** The "ended before" marks that apply to a person (and a site). */
  endedMarks(accountId: string, clientId?: string): Promise<EndedMarks>;
  /**
   * Starts collecting this request's writes (token endpoint): `consume` and
   * `upsert` return at once and are sent together by {@link flush}.
   */
  batch(ctx: object): void;
  /**
   * Sends the request's collected writes in one round trip. Resolves with the
   * error to answer instead (a consumed code or refresh token presented twice
   * at once: its grant is revoked), or undefined. `discard` drops them (the
   * request failed: nothing it meant to write is written, nothing consumed).
   * `answer` is the token endpoint's answer, kept for the reuse leeway of the
   * refresh token it consumes (sealed with that token's value).
   */
  flush(ctx: object, discard?: boolean, answer?: object): Promise<Error | undefined>;
  /**
   * Sends `write` (a write of the caller's own, such as the site's "last
   * used") right before the writes `ctx` collects, in the same tick, so both
   * leave in one round trip, even when they are discarded; at once when `ctx`
   * collects none. With `use` (the site's "last used" that `write` makes),
   * the write goes inside the collected writes' one script instead, where
   * they go as one (a single node), and `write` is not called.
   */
  alongside(ctx: object | undefined, write: () => void, use?: SiteUse): void;
  /**
   * The answer to give again, when this request presented a refresh token
   * within its reuse leeway (the provider then found no token and said
   * invalid_grant: nothing else happened).
   */
  takeReplay(ctx: object): object | undefined;
  /**
   * The code or refresh token this request presented, when it had been
   * consumed already (a reuse). oidc-provider revokes the grant of a reused
   * code before it names the code on the request, so the theft report takes
   * the person and the grant from here.
   */
  consumedSource(ctx: object): AdapterPayload | undefined;
}

/** A request that lost a refresh race within the leeway: it answers the winner's answer. */
class LostToLeeway extends Error {}

/**
 * oidc-provider's adapter contract over a {@link Store}. Records are hashes
 * `{ p: payload, c: consumedAt }` with a TTL set in the same step as the write.
 */
export function createStoreAdapter(store: Store, options: StoreAdapterOptions = {}): StoreAdapter {
  const clockTolerance = options.clockTolerance ?? 15;
  const leewayMs = (options.refreshReuseLeeway ?? 60) * 1000;
  const publicClientLeeway = options.publicClientLeeway ?? false;
  const defaultTtl = options.defaultTtl ?? 14 * 24 * 60 * 60;
  const keys = adapterKeys(store.prefix);

  const ttlMs = (expiresIn: number | undefined) =>
    Math.max(1, Math.round(((expiresIn ?? defaultTtl) + clockTolerance) * 1000));

  /** A stored record as oidc-provider wants it back; a credential's id is put back as its `jti`. */
  function parse(p: string, c: string | null, id?: string): AdapterPayload {
    const payload = JSON.parse(p) as AdapterPayload;
    if (id !== undefined) payload.jti = id;
    if (c != null) payload.consumed = Number(c);
    return payload;
  }

  function read(key: string, id?: string): Promise<AdapterPayload | undefined> {
    return store.hmget(key, ['p', 'c']).then(([p, c]) => (p == null ? undefined : parse(p, c ?? null, id)));
  }

  const { session: sessionKeyParts, grant: grantKeyParts, site: siteKeyParts, person: personKeyParts } = tokenReadKeyParts(store.prefix);
  const NOT_READ = ['', ''] as const;

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
        const [p, c, site, person] = reply as [string?, string?, (string | null)[]?, (string | null)[]?];
        return p == null ? undefined : unlessEnded(model, parse(p, c ?? null), decodeMarks(site, person));
      });
    }
    return read(key).then((payload) => {
      if (!payload?.accountId) return payload;
      return readMarks(payload.accountId as string, model === 'Grant' ? payload.clientId as string | undefined : undefined)
        .then((marks) => unlessEnded(model, payload, marks));
    });
  }

  // Every use of a token reads, after the token, its session (session-bound
  // tokens) and its grant, one after the other. Reading them together with
  // the token (one script, on a single node) or as soon as the token is known
  // (two round trips, on a Cluster, where they live in other hash slots)
  // saves round trips; the reads are handed to the provider's next
  // Session.findByUid / Grant.find in the same request only, once. The marks
  // that may have ended them ride along and are applied before the hand-over.
  const prefetched = new WeakMap<object, Map<string, Promise<AdapterPayload | undefined>>>();

  function handOver(ctx: object, key: string, pending: Promise<AdapterPayload | undefined>): void {
    let reads = prefetched.get(ctx);
    if (!reads) prefetched.set(ctx, (reads = new Map()));
    reads.set(key, pending);
  }

  /** Whether this request goes on to read the token's grant (revocation never does). */
  const readsGrant = (ctx: object) => GRANT_ROUTES.has((ctx as { oidc?: { route?: string } }).oidc?.route ?? '');

  /** Cluster: starts the session, grant and mark reads as soon as the token is known. */
  function prefetch(ctx: object, payload: AdapterPayload): void {
    const session = payload.expiresWithSession && payload.sessionUid ? keys.sessionUid(payload.sessionUid as string) : undefined;
    const grant = payload.grantId && readsGrant(ctx) ? keys.record('Grant', payload.grantId) : undefined;
    if (!session && !grant) return;
    const marks = readMarks(payload.accountId as string | undefined, payload.clientId as string | undefined);
    const start = (model: 'Grant' | 'Session', key: string) => {
      const pending = Promise.all([read(key), marks]).then(([record, m]) => unlessEnded(model, record, m));
      pending.catch(() => {}); // a failed read surfaces when the provider asks for it
      handOver(ctx, key, pending);
    };
    if (session) start('Session', session);
    if (grant) start('Grant', grant);
  }

  /** Single node: the token, its session, its grant and their marks in one script. */
  function readToken(key: string, id: string, ctx: object | undefined): Promise<AdapterPayload | undefined> {
    const withGrant = ctx !== undefined && readsGrant(ctx);
    const argv = ctx
      ? [...sessionKeyParts, ...(withGrant ? grantKeyParts : NOT_READ), ...siteKeyParts, ...personKeyParts]
      : [...NOT_READ, ...NOT_READ, ...NOT_READ, ...NOT_READ];
    return store.run(commands.tokenRead(), [key], argv)
      .then((reply) => fromTokenRead(reply as TokenReadReply, id, ctx, withGrant));
  }

  type TokenReadReply = [string?, string?, string?, string?, string?, number?, (string | null)[]?, (string | null)[]?];

  /** The token's payload; its session and grant, unless a mark ended them, are handed on to the same request's next reads. */
  function fromTokenRead(reply: TokenReadReply, id: string, ctx: object | undefined, withGrant: boolean): AdapterPayload | undefined | Promise<AdapterPayload | undefined> {
    const [p, c, session, grant, answer, unwritten, site, person] = reply;
    if (p == null) return undefined;
    const payload = parse(p, c ?? null, id);
    if (ctx && payload.consumed) consumedSources.set(ctx, payload);
    if (answer != null) return withinLeeway(ctx, id, payload, answer, unwritten === 1);
    if (ctx) {
      const marks = decodeMarks(site, person);
      if (payload.expiresWithSession && payload.sessionUid) {
        handOver(ctx, keys.sessionUid(payload.sessionUid as string), Promise.resolve(unlessEnded('Session', session == null ? undefined : parse(session, null), marks)));
      }
      if (withGrant && payload.grantId) {
        handOver(ctx, keys.record('Grant', payload.grantId), Promise.resolve(unlessEnded('Grant', grant == null ? undefined : parse(grant, null), marks)));
      }
    }
    return payload;
  }

  // Refresh that survives a lost answer (README "Refresh that survives a lost
  // answer"): the same client presenting a refresh token it already rotated
  // gets that rotation's answer again, only while every token of that answer
  // is still live and unused and nothing ended the chain since. Anything else
  // is theft.
  const replays = new WeakMap<object, object>();
  /** A reused code or refresh token a request presented (see StoreAdapter.consumedSource). */
  const consumedSources = new WeakMap<object, AdapterPayload>();
  /** Requests rotating again a refresh token whose first rotation's new tokens were recorded as never written. */
  const redo = new WeakMap<object, string>();

  type TokenContext = KoaContextWithOIDC | undefined;

  /**
   * Whether this client may get a rotation's answer again at all: a
   * confidential client (it authenticated), or, when the host allows it, a
   * public client whose refresh token is bound to a DPoP key (the retry
   * proves that key). Certificate-bound tokens never (the certificate is the
   * provider's to check, on its own path).
   */
  function leewayClient(ctx: KoaContextWithOIDC, token: AdapterPayload | { jkt?: unknown; 'x5t#S256'?: unknown }): boolean {
    if (leewayMs <= 0 || token['x5t#S256']) return false;
    if (ctx.oidc.client?.clientAuthMethod === 'none') return publicClientLeeway && typeof token.jkt === 'string';
    return true;
  }

  /** Whether the rotation this request makes keeps its answer for the leeway. */
  function keepsAnswer(ctx: object | undefined): boolean {
    const rotated = (ctx as TokenContext)?.oidc?.entities?.RotatedRefreshToken as { jkt?: unknown; 'x5t#S256'?: unknown } | undefined;
    return rotated !== undefined && leewayClient(ctx as KoaContextWithOIDC, rotated);
  }

  /**
   * Where a kept answer stands now: `over` when its chain ended (its grant
   * revoked or ended by a mark, its session gone), `redo` when its new tokens
   * were recorded as never written (the answer never left: a retry may rotate
   * again), `live` when its refresh token is unused and its access token
   * still there, else `over` (a token of it was used or revoked).
   */
  async function answerStands(payload: AdapterPayload, answer: Record<string, unknown>, unwritten: boolean): Promise<'live' | 'redo' | 'over'> {
    const session = payload.expiresWithSession && payload.sessionUid ? keys.sessionUid(payload.sessionUid as string) : undefined;
    const [successor, access, grant, bound] = await Promise.all([
      store.hmget(keys.record('RefreshToken', answer.refresh_token as string), ['p', 'c']),
      typeof answer.access_token === 'string' ? store.hmget(keys.record('AccessToken', answer.access_token), ['p']) : [null],
      payload.grantId ? readMarked('Grant', keys.record('Grant', payload.grantId)) : undefined,
      session ? readMarked('Session', session) : undefined,
    ]);
    const chainLives = grant !== undefined && grant.clientId === payload.clientId
      && (!session || (bound?.accountId === payload.accountId
        && (bound?.authorizations as Record<string, { grantId?: string }> | undefined)?.[payload.clientId as string]?.grantId === payload.grantId));
    if (!chainLives) return 'over';
    if (unwritten) return 'redo';
    return successor[0] != null && successor[1] == null && access[0] != null ? 'live' : 'over';
  }

  async function withinLeeway(ctx: object | undefined, id: string, payload: AdapterPayload, sealed: string, unwritten: boolean): Promise<AdapterPayload | undefined> {
    const oidc = (ctx as TokenContext)?.oidc;
    if (!ctx || oidc?.route !== 'token' || oidc.client?.clientId !== payload.clientId) return payload;
    if (!leewayClient(ctx as KoaContextWithOIDC, payload)) return payload;
    if (typeof payload.jkt === 'string' && !(await proofMatches(ctx as KoaContextWithOIDC, payload.jkt))) return payload;
    const answer = open(sealed, id);
    if (typeof answer?.refresh_token !== 'string') return payload;
    const stands = await answerStands(payload, answer, unwritten);
    if (stands === 'live') {
      replays.set(ctx, answer);
      answeredAgain(ctx, payload);
      return undefined;
    }
    if (stands === 'redo') {
      // The first rotation's answer never left: whatever of it was written nobody holds.
      await store.del([keys.record('RefreshToken', answer.refresh_token), ...(typeof answer.access_token === 'string' ? [keys.record('AccessToken', answer.access_token)] : [])]);
      redo.set(ctx, id);
      const { consumed: _consumed, ...fresh } = payload;
      return fresh as AdapterPayload;
    }
    return payload;
  }

  function answeredAgain(ctx: object, payload: AdapterPayload): void {
    const consumed = typeof payload.consumed === 'number' ? payload.consumed : Math.floor(Date.now() / 1000);
    options.onAnswerAgain?.({
      clientId: payload.clientId as string,
      grantId: payload.grantId,
      ageSeconds: Math.max(0, Math.floor(Date.now() / 1000) - consumed),
    }, ctx);
  }

  function readOnce(key: string, model: 'Grant' | 'Session'): Promise<AdapterPayload | undefined> {
    const ctx = Provider.ctx;
    const reads = ctx && prefetched.get(ctx);
    const pending = reads?.get(key);
    if (pending) {
      reads!.delete(key);
      return pending;
    }
    return readMarked(model, key);
  }

  async function revokeGrant(grantId: string): Promise<void> {
    const members = (await store.run(
      commands.grantRevoke(),
      [keys.record('Grant', grantId), keys.grantIndex(grantId), keys.grantTombstone(grantId)],
      [ttlMs(0) + 60_000],
    )) as string[];
    await store.del(members);
  }

  async function grantIds(accountId: string, clientId: string): Promise<string[]> {
    const now = Date.now();
    const entries = await store.zentries(keys.accountGrants(accountId, clientId));
    return entries.filter(([, expiresAt]) => expiresAt > now).map(([grantId]) => grantId);
  }

  /** Writes a record with its TTL, and indexes it under its grant (and account). */
  async function write(model: string, id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const key = keys.record(model, id);
    const ttl = ttlMs(expiresIn);
    const json = JSON.stringify(CREDENTIALS.has(model) ? withoutId(payload) : payload);
    const now = Date.now();

    if (model === 'Grant') {
      const writes: Promise<unknown>[] = [
        store.run(commands.guardedUpsert(), [key, keys.grantTombstone(id)], [json, ttl]),
      ];
      if (payload.accountId && payload.clientId) {
        writes.push(store.run(commands.indexAdd(), [keys.accountGrants(payload.accountId, payload.clientId)], [id, now + ttl, now]));
      }
      await Promise.all(writes);
      return;
    }

    const writes: Promise<unknown>[] = [store.run(commands.upsert(), [key], [json, ttl])];
    if (model === 'Session' && payload.uid) {
      writes.push(store.run(commands.upsert(), [keys.sessionUid(payload.uid)], [json, ttl]));
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

  /**
   * Marks a record consumed in one atomic step; never recreates a missing one.
   * A record consumed by a concurrent request is the theft signal the
   * provider acts on when it sees `consumed`: the whole chain goes.
   */
  async function markConsumed(model: string, id: string, answer?: object, ctx?: object): Promise<void> {
    const key = keys.record(model, id);
    const keep = answer !== undefined && model === 'RefreshToken' && keepsAnswer(ctx);
    const again = keep && ctx !== undefined && redo.get(ctx) === id ? '1' : '0';
    const reply = (await store.run(
      commands.consume(),
      keep ? [key, keys.answer(key), keys.unwritten(key)] : [key],
      keep ? [Math.floor(Date.now() / 1000), seal(answer, id), leewayMs, again] : [Math.floor(Date.now() / 1000)],
    )) as ConsumeReply;
    if (reply[0] === 1) return;
    await refused(model, id, reply, ctx);
  }

  type ConsumeReply = [number, string?, string?, number?];

  /** A consume that found the record gone (-1) or consumed already (0): the error to answer, the grant revoked. */
  async function refused(model: string, id: string, reply: ConsumeReply, ctx?: object): Promise<never> {
    if (reply[0] === -1) {
      throw new errors.InvalidGrant(`${model} not found`);
    }
    const payload = JSON.parse(reply[1]!) as AdapterPayload;
    // Lost a race with the same token: within the leeway the winner's answer is this one's too.
    if (reply[2] && (await withinLeeway(ctx, id, { ...payload, consumed: Math.floor(Date.now() / 1000) }, reply[2], reply[3] === 1)) === undefined) {
      throw new LostToLeeway();
    }
    if (payload.grantId) await revokeGrant(payload.grantId);
    options.onReplay?.({
      model,
      grantId: payload.grantId,
      clientId: payload.clientId,
      accountId: payload.accountId,
    }, ctx);
    throw new errors.InvalidGrant(`${model} already used`);
  }

  // The token endpoint's writes (consume the old code or refresh token, save
  // the new tokens) are collected and sent together when the response is
  // ready: one round trip instead of three. See batch()/flush().
  type Write =
    | { consume: true; model: string; id: string }
    | { consume: false; model: string; id: string; payload: AdapterPayload; expiresIn: number };
  const batches = new WeakMap<object, Write[]>();
  const beside = new WeakMap<object, { write: () => void; use: SiteUse | undefined }[]>();

  const runWrite = (op: Write, answer?: object, ctx?: object): Promise<void> =>
    (op.consume ? markConsumed(op.model, op.id, answer, ctx) : write(op.model, op.id, op.payload, op.expiresIn));

  /**
   * The usual token endpoint batch (at most one code or refresh token
   * consumed, new tokens of one grant saved) goes as one script on a single
   * node; anything else, and every batch on a Cluster, one script per write.
   */
  function oneScript(ops: Write[]): boolean {
    if (!store.singleNode) return false;
    let consumes = 0;
    let grantId: unknown;
    for (const op of ops) {
      if (op.consume) {
        consumes += 1;
        continue;
      }
      if (!GRANTABLE.has(op.model) || typeof op.payload.grantId !== 'string' || op.payload.userCode) return false;
      if (grantId !== undefined && op.payload.grantId !== grantId) return false;
      grantId = op.payload.grantId;
    }
    return consumes <= 1 && grantId !== undefined;
  }

  /** Index members that expired are dropped on about one batch in PRUNE_EVERY, not on every one. */
  const PRUNE_EVERY = 8;
  let batchesSincePrune = 0;

  /** {@link oneScript}'s batch: token_batch.lua. Same outcomes as the writes one by one, nothing written on a refusal. */
  async function flushAsOne(ops: Write[], answer: object | undefined, ctx: object, use: SiteUse | undefined): Promise<void> {
    const consumed = ops.find((op) => op.consume);
    const saved = ops.filter((op): op is Extract<Write, { consume: false }> => !op.consume);
    const grantId = saved[0]!.payload.grantId!;
    const record = consumed ? keys.record(consumed.model, consumed.id) : keys.grantTombstone(grantId);
    const keep = consumed !== undefined && answer !== undefined && consumed.model === 'RefreshToken' && keepsAnswer(ctx);
    const now = Date.now();
    batchesSincePrune = (batchesSincePrune + 1) % PRUNE_EVERY;
    const keyList = [
      record, keep ? keys.answer(record) : record, keys.grantIndex(grantId), keys.grantTombstone(grantId),
      use ? use.sites : record, keep ? keys.unwritten(record) : record,
    ];
    const argv: (string | number)[] = [
      consumed ? Math.floor(now / 1000) : '',
      keep ? '1' : '0',
      keep ? seal(answer, consumed.id) : '',
      leewayMs,
      keep && redo.get(ctx) === consumed.id ? '1' : '0',
      now,
      batchesSincePrune === 0 ? '1' : '0',
      use ? use.clientId : '',
      use ? use.at : '',
    ];
    for (const op of saved) {
      keyList.push(keys.record(op.model, op.id));
      argv.push(JSON.stringify(CREDENTIALS.has(op.model) ? withoutId(op.payload) : op.payload), ttlMs(op.expiresIn));
    }
    const reply = (await store.run(commands.tokenBatch(), keyList, argv)) as ConsumeReply;
    if (reply[0] === 1) return;
    await refused(consumed!.model, consumed!.id, reply, ctx);
  }

  /**
   * Writes sent one by one (a Cluster) where the consume went through and
   * some of the new tokens' writes did not: recorded beside the kept answer,
   * so that the client's retry within the leeway may rotate again (it holds
   * nothing usable). Best effort: unrecorded, the retry is treated as a reuse.
   */
  async function recordUnwritten(ops: Write[], results: PromiseSettledResult<void>[], answer: object | undefined, ctx: object): Promise<void> {
    const i = ops.findIndex((op) => op.consume);
    const op = ops[i];
    if (!op || results[i]!.status !== 'fulfilled' || answer === undefined || op.model !== 'RefreshToken' || !keepsAnswer(ctx)) return;
    const key = keys.record(op.model, op.id);
    await store.run(commands.putTtl(), [keys.unwritten(key)], [leewayMs, 'at', Date.now()]).catch(() => {});
  }

  function collecting(): Write[] | undefined {
    const ctx = Provider.ctx;
    return ctx ? batches.get(ctx) : undefined;
  }

  class StoreModelAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    key(id: string): string {
      return keys.record(this.model, id);
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      // A proof's or client assertion's jti (ReplayDetection) is recorded at once: a request
      // that fails later discards its batch, and a jti it presented must not be usable again.
      const pending = this.model === 'ReplayDetection' ? undefined : collecting();
      if (pending) {
        pending.push({ consume: false, model: this.model, id, payload, expiresIn });
        return;
      }
      await write(this.model, id, payload, expiresIn);
    }

    // Not async where it hands on a promise: each extra promise costs on the hot path.
    find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Grant') return readOnce(this.key(id), 'Grant');
      if (this.model === 'Session') return readMarked('Session', this.key(id));
      if (!GRANTABLE.has(this.model)) return read(this.key(id), CREDENTIALS.has(this.model) ? id : undefined);
      const ctx = Provider.ctx;
      if (store.singleNode) return readToken(this.key(id), id, ctx);
      return read(this.key(id), id).then((payload) => {
        if (payload && ctx) prefetch(ctx, payload);
        if (payload?.consumed && ctx) consumedSources.set(ctx, payload);
        // A consumed refresh token: its answer may still be kept (another round trip, on this rare path only).
        if (payload?.consumed && this.model === 'RefreshToken' && leewayMs > 0 && (ctx as TokenContext)?.oidc?.route === 'token') {
          const key = this.key(id);
          return Promise.all([store.get(keys.answer(key)), store.hmget(keys.unwritten(key), ['at'])])
            .then(([sealed, [unwritten]]) => (sealed ? withinLeeway(ctx, id, payload, sealed, unwritten != null) : payload));
        }
        return payload;
      });
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return readOnce(keys.sessionUid(uid), 'Session');
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const [pointer] = await store.hmget(keys.userCode(userCode), ['p']);
      return pointer == null ? undefined : this.find(JSON.parse(pointer) as string);
    }

    async consume(id: string): Promise<void> {
      const pending = collecting();
      if (pending) {
        pending.push({ consume: true, model: this.model, id });
        return;
      }
      await markConsumed(this.model, id);
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Grant') {
        await revokeGrant(id);
        return;
      }
      const key = this.key(id);
      if (this.model === 'Session') {
        const [p] = await store.hmget(key, ['p']);
        const uid = p ? (JSON.parse(p) as AdapterPayload).uid : undefined;
        await store.del(uid ? [key, keys.sessionUid(uid)] : [key]);
        return;
      }
      await store.del([key]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const members = (await store.run(
        commands.indexTake(),
        [keys.grantIndex(grantId)],
        [`${store.prefix}${this.model}:`],
      )) as string[];
      await store.del(members);
    }
  }

  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const endBefore = (key: string, field: 'grants' | 'sessions', keep = '') =>
    store.run(commands.endBefore(), [key], [field, nowSeconds(), keep]).then(Number);

  return {
    factory: (model: string) => new StoreModelAdapter(model),
    revokeGrant,
    grantIds,
    endSiteGrants: (clientId) => endBefore(keys.siteEnded(clientId), 'grants'),
    endAccountGrants: (accountId) => endBefore(keys.personEnded(accountId), 'grants'),
    endAccountSessions: (accountId, keep) => endBefore(keys.personEnded(accountId), 'sessions', keep),
    endedMarks: (accountId, clientId) => readMarks(accountId, clientId),
    batch(ctx) {
      batches.set(ctx, []);
    },
    consumedSource(ctx) {
      return consumedSources.get(ctx);
    },
    takeReplay(ctx) {
      const answer = replays.get(ctx);
      replays.delete(ctx);
      return answer;
    },
    alongside(ctx, write, use) {
      if (!ctx || !batches.has(ctx)) return write();
      const waiting = beside.get(ctx);
      if (waiting) waiting.push({ write, use });
      else beside.set(ctx, [{ write, use }]);
    },
    async flush(ctx, discard = false, answer) {
      const ops = batches.get(ctx) ?? [];
      batches.delete(ctx);
      const waiting = beside.get(ctx) ?? [];
      beside.delete(ctx);
      const asOne = !discard && ops.length > 0 && oneScript(ops);
      // One site use rides inside the script (one command fewer); anything else goes beside it.
      const folded = asOne ? waiting.find((w) => w.use) : undefined;
      for (const w of waiting) if (w !== folded) w.write();
      if (discard || ops.length === 0) return undefined;
      if (asOne) {
        // Nothing is written when the consume is refused: nothing to take back.
        try {
          await flushAsOne(ops, answer, ctx, folded?.use);
          return undefined;
        } catch (err) {
          if (err instanceof LostToLeeway) return undefined;
          if (err instanceof errors.InvalidGrant) return err as Error;
          throw err;
        }
      }
      const results = await Promise.allSettled(ops.map((op) => runWrite(op, answer, ctx)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (!failed) return undefined;
      if (failed.reason instanceof LostToLeeway) {
        // The client gets the winner's answer (takeReplay): what this request wrote nobody holds.
        await store.del(ops.flatMap((op) => (op.consume ? [] : [keys.record(op.model, op.id)])));
        return undefined;
      }
      if (failed.reason instanceof errors.InvalidGrant) return failed.reason as Error;
      await recordUnwritten(ops, results, answer, ctx);
      throw failed.reason;
    },
    async revokeAccountGrants(accountId, clientId) {
      const ids = await grantIds(accountId, clientId);
      await Promise.all(ids.map(revokeGrant));
      await store.del([keys.accountGrants(accountId, clientId)]);
      return ids;
    },
  };
}
