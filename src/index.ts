/**
 * oidc-signout-notify: sign-out, revocation, introspection and site-to-user
 * notifications for panva/oidc-provider v9. One barrel of named exports; no
 * side effects on import.
 */
export { createSignoutNotify } from './plugin.ts';
export type { SignoutNotify } from './plugin.ts';
export { optionsSchema, resolveOptions } from './options.ts';
export type { Contact, ContactLookup, Logger, ResolvedOptions, SignoutNotifyOptions } from './options.ts';
export { createStoreAdapter, adapterKeys } from '../adapters/store-adapter.ts';
export type { ReplayEvent, StoreAdapter, StoreAdapterOptions } from '../adapters/store-adapter.ts';
export { MemoryStore, RedisStore } from './store/store.ts';
export type { Store } from './store/store.ts';
export type { Letter, Mailer } from './mail/mailer.ts';
export type { Member, Organization, Organizations } from './orgs/organizations.ts';
export type { BlockResult, RemoveMemberResult, UnblockResult } from './sites/access.ts';
export type { ConnectedSite, ConnectedSites, SiteStatus } from './sites/connected-sites.ts';
export { REPLAY_EVENT } from './provider/reuse.ts';
