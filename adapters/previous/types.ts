import type { Adapter } from 'oidc-provider';

/**
 * What a host had as oidc-provider's `adapter`: a class constructed with the
 * model's name, or a factory called with it (oidc-provider tells them apart
 * the same way: lib/helpers/type_validators.js).
 */
export type PreviousAdapter = (new (model: string) => Adapter) | ((model: string) => Adapter);

/** One record of the previous store, as a listing names it. */
export interface PreviousRecordId {
  /** oidc-provider's model name: Session, Grant, AccessToken, RefreshToken, AuthorizationCode, ... */
  model: string;
  /** The id the previous adapter was given in `upsert` (the token's value for tokens). */
  id: string;
}

/**
 * Where a previous store's records are listed, for the bulk import and for
 * deleteAccount while the window is open. `pages(checkpoint)` lists them from
 * a checkpoint it gave before (undefined: from the start), a page at a time;
 * a page's checkpoint says where the next one starts, so an import cut short
 * resumes there.
 */
export interface RecordSource {
  pages(checkpoint?: string): AsyncIterable<{ records: PreviousRecordId[]; checkpoint: string }>;
  /** About how many records there are, for the import's ETA (when it is cheap to know). */
  count?(): Promise<number>;
}

/** A record source, or a function that lists the records again each time it is called (no resuming: each run starts over). */
export type RecordSourceInput = RecordSource | (() => AsyncIterable<PreviousRecordId>);

/** The models oidc-provider 9 keeps in its adapter. */
export const MODELS = new Set([
  'Session', 'AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'ClientCredentials', 'Client',
  'InitialAccessToken', 'RegistrationAccessToken', 'Interaction', 'ReplayDetection', 'PushedAuthorizationRequest',
  'Grant', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode',
]);
