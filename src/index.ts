/**
 * oidc-signout-notify: sign-out, revocation, introspection and site-to-user
 * notifications for panva/oidc-provider v9. One barrel of named exports; no
 * side effects on import.
 */
export { createSignoutNotify } from './plugin.ts';
export type { SignoutNotify } from './plugin.ts';
export { optionsSchema, resolveOptions } from './options.ts';
export type { ResolvedOptions, SignoutNotifyOptions } from './options.ts';
export type { Contact, ContactLookup, Logger, MailTransport, OutgoingMail } from './host.ts';
export { createStoreAdapter, adapterKeys } from '../adapters/store-adapter.ts';
export type { AnswerAgainEvent, ReplayEvent, SiteUse, StoreAdapter, StoreAdapterOptions } from '../adapters/store-adapter.ts';
export type { EndedMarks } from '../adapters/ended.ts';
export { MemoryStore, RedisStore } from './store/store.ts';
export { isUnavailable, redisReconnect, StoreUnavailableError } from './store/availability.ts';
export type { Store } from './store/store.ts';
export type { Letter, Mailer } from './mail/mailer.ts';
export type { Member, Organization, Organizations } from './orgs/organizations.ts';
export type { BlockResult, RemoveAccessResult, RemoveMemberResult, UnblockResult } from './sites/access.ts';
export type { DeleteAccountResult } from './sites/delete-account.ts';
export type { ConnectedSite, ConnectedSites, SiteStatus } from './sites/connected-sites.ts';
export type { ServiceSession, Sessions } from './sessions/sessions.ts';
export type { Category, Delivery, SkipReason } from './notify/categories.ts';
export type { SenderPatch, SenderSettings, Senders } from './notify/senders.ts';
export type { Inbox, InboxEntry, InboxItem, InboxPage } from './notify/inbox.ts';
export type { LetterJob, LetterOutcome, LetterQueue, NotificationLetterJob, SecurityLetterJob, TheftLetterJob } from './notify/letters.ts';
export type { NotificationResult } from './notify/notification.ts';
export type { QueueCount, QueueCounts } from './queue/counts.ts';
export { SECURITY_NOTICE_KINDS } from './notify/security-notices.ts';
export type { SecurityNoticeDetails, SecurityNoticeKind, SecurityNoticeResult } from './notify/security-notices.ts';
export type { Preferences } from './preferences.ts';
export { RECENT_SIGN_IN_ACTIONS } from './console/recent-sign-in.ts';
export type { RecentSignIn, RecentSignInAction, RecentSignInRequest } from './console/recent-sign-in.ts';
export type { ConsolePerson, ConsoleSection, ConsoleSections } from './host.ts';
export type { Locale } from './i18n/index.ts';
export { BACKCHANNEL_LOGOUT_EVENT, LETTER_EVENT, NOTIFIED_EVENT, REFRESH_REPLAYED_EVENT, REPLAY_EVENT, SHARED_SIGNALS_EVENT, UNAVAILABLE_EVENT } from './events.ts';
export type { BackchannelLogoutEvent, LetterEvent, NotifiedEvent, SharedSignalsEvent, SignoutNotifyEventName, SignoutNotifyEvents, UnavailableEvent } from './events.ts';
export type { CredentialChange, CredentialType, SharedSignals } from './ssf/host-api.ts';
export { EVENT_TYPES as SECURITY_EVENT_TYPES } from './ssf/event-types.ts';
export { UPSTREAM_EVENT_TYPES } from './upstream-signals/events.ts';
export type { UpstreamAction } from './upstream-signals/events.ts';
export type { LinkedAccount, LinkedAccountLookup, UpstreamActionRecord, UpstreamHold } from './upstream-signals/receiver.ts';
export type { UpstreamSubject } from './upstream-signals/subject.ts';
export type { UpstreamStream } from './upstream-signals/connect.ts';
