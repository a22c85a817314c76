import { createHash } from 'node:crypto';

import { LOCALES, t, type Locale, type MessageKey } from '../i18n/index.ts';
import type { SignalKind } from './event-types.ts';

/** Why a site is told (the key of reason_admin and reason_user in every language). */
export type ReasonKey =
  | 'sign_out' | 'sign_out_everywhere' | 'theft' | 'expired' | 'service'
  | 'passkey_added' | 'passkey_removed' | 'account_linked' | 'account_unlinked'
  | 'org_removed' | 'account_disabled' | 'account_purged' | 'identifier_changed'
  | 'site_blocked' | 'access_removed';

/** One cause the service tells the person's sites of (one cause txn; each site gets its own, txnAt). */
export interface Signal {
  kind: SignalKind;
  accountId: string;
  /** The sites the cause concerns; absent: every site the person is connected to. */
  clientIds?: string[] | undefined;
  /** The cause's own, never sent: each site's SETs carry txnAt(txn, clientId) (RFC 8417 section 2.2). */
  txn: string;
  reason: ReasonKey;
  /** When it happened (ms since the epoch). */
  at: number;
  /** The event's own members (credential_type, change_type, claims, initiating_entity, ...). */
  fields?: Record<string, unknown> | undefined;
  /**
   * The sites and subjects, resolved when the cause was queued: for a cause
   * after which the person's records are gone (account-purged), so the
   * worker need not read them.
   */
  resolved?: { targets: { clientId: string; sub: string }[]; locale?: Locale | undefined } | undefined;
}

/** A language map (BCP 47 tag -> text), English first, then the person's language. */
export function languageMap(key: MessageKey, locale: Locale | undefined): Record<string, string> {
  const out: Record<string, string> = { en: t('en', key) };
  if (locale && locale !== 'en' && (LOCALES as readonly string[]).includes(locale)) out[locale] = t(locale, key);
  return out;
}

/** The SET's jti for one cause at one site: the same on a retry of the fan-out, so it is queued once. */
export function jtiFor(signal: Signal, clientId: string): string {
  return createHash('sha256').update(`${signal.txn}\0${signal.kind}\0${clientId}`).digest('base64url').slice(0, 32);
}

/**
 * The `txn` one site gets for a cause (RFC 8417 section 2.2): the same for
 * every SET of that cause at that site, another at every other site, and
 * not derivable from it without the cause's random txn, which is never
 * sent. Two sites cannot join their records on it (pairwise subjects exist
 * to prevent exactly that; docs/choices.md "A txn per site").
 */
export function txnAt(txn: string, clientId: string): string {
  return createHash('sha256').update(`txn\0${txn}\0${clientId}`).digest('base64url').slice(0, 22);
}

/**
 * The claims of one SET (RFC 8417, SSF 1.0 section 4.1, the CAEP
 * interoperability profile): one event, of `type` (the name the site's
 * stream asked for it by), the subject as the site knows the person
 * (`sub_id`, iss_sub, pairwise included), no `sub`, no `exp`.
 */
export function setClaims(signal: Signal, opts: { issuer: string; clientId: string; sub: string; type: string; locale: Locale | undefined; now: number }): Record<string, unknown> {
  const event: Record<string, unknown> = {
    event_timestamp: Math.floor(signal.at / 1000),
    ...signal.fields,
    reason_admin: languageMap(`ssf.admin.${signal.reason}`, opts.locale),
    reason_user: languageMap(`ssf.user.${signal.reason}`, opts.locale),
  };
  return {
    iss: opts.issuer,
    aud: opts.clientId,
    iat: Math.floor(opts.now / 1000),
    jti: jtiFor(signal, opts.clientId),
    txn: txnAt(signal.txn, opts.clientId),
    sub_id: { format: 'iss_sub', iss: opts.issuer, sub: opts.sub },
    events: { [opts.type]: event },
  };
}
