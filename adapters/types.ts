import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { EndedMarks } from './ended.ts';

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
   * The length every client-credentials token value has (the plugin's
   * configuration makes them so: adapters/keys.ts): a ClientCredentials
   * lookup of a value of another length answers "not found" without a store
   * command. Unset (the adapter alone): every lookup reads the store.
   */
  clientCredentialsLength?: number | undefined;
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
   * Default 60 (docs/reuse-leeway.md "Refresh that survives a lost answer". The answer is
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
  /**
   * Whether the account behind a token may still use the client, as the
   * provider's `findAccount` decides at a refresh (a host's account gone, an
   * organization's member removed). The reuse leeway asks it before it gives
   * an answer again, since that answer never reaches oidc-provider's own
   * check. Omitted: the account is not checked again.
   */
  accountLives?: (ctx: object, token: AdapterPayload) => Promise<boolean>;
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
   * mark (ms since the epoch).
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
