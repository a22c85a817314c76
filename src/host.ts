/**
 * What the host gives the plugin and what the plugin calls on it: the
 * person's contact details, the logger, the mail transport and the console's
 * host sections. Types only, at the bottom of the plugin's layers, so that
 * every layer may name them (docs/architecture.md).
 */
import type { Locale } from './i18n/index.ts';

/** What the host tells the plugin about a person: where letters go and in which language. */
export interface Contact {
  email?: string | undefined;
  locale?: string | undefined;
  /** How the console names the person when there is no address (an account signed in by passkey only). */
  name?: string | undefined;
}

/** Looks up a person's contact details by oidc-provider accountId (the host owns accounts). */
export type ContactLookup = (accountId: string) => Promise<Contact | undefined> | Contact | undefined;

/** Where the plugin writes what it does; it never passes tokens, secrets or codes. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** One letter as the plugin hands it to the transport (nodemailer's message fields). */
export interface OutgoingMail {
  from: string | { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * Where letters go: any nodemailer transport fits (`nodemailer.createTransport(...)`:
 * pooled SMTP, SES, ...). The plugin only calls `sendMail`; a rejection with
 * an SMTP `responseCode` of 5xx gives the letter up, anything else retries it.
 */
export interface MailTransport {
  sendMail(message: OutgoingMail): Promise<unknown>;
}

/**
 * A section of the host's own in the person's console (the reference
 * provider's passkeys and linked accounts, say): shown after the plugin's
 * sections, as a card with its heading, and listed in the page's navigation.
 * Its forms post to the host's own routes under `/console/`, which check the
 * session, the origin and a CSRF token of their own.
 */
export interface ConsoleSection {
  /** Anchor and navigation id: lower-case letters, digits and hyphens (`passkeys`). */
  id: string;
  /** The heading, in the reader's language (plain text; escaped by the plugin). */
  title: string;
  /** The card's content: markup the host built and escaped itself. */
  html: string;
  /**
   * Script files the section needs, as paths on the service's own origin
   * (`/assets/passkeys.js`): loaded deferred and allowed by their exact URL in
   * the page's CSP, which also allows `connect-src 'self'`. The page works
   * without them.
   */
  scripts?: string[] | undefined;
  /**
   * Other origins the section's forms may end up on after a redirect (CSP
   * `form-action`; browsers check the redirect of a form's POST): an upstream
   * provider a "Link" button sends the person to, say.
   */
  formAction?: string[] | undefined;
}

/** Whom the console is shown to, for the host's sections. */
export interface ConsolePerson {
  accountId: string;
  locale: Locale;
  /**
   * The console's `done` query value when it is none of the plugin's own
   * notices (`passkey_added`): the host shows its notice in its section, as
   * `<p id="notice" ...>`, the page's target.
   */
  notice?: string | undefined;
}

/** The host's sections of the console for one person, in order (none: an empty list). */
export type ConsoleSections = (person: ConsolePerson) => Promise<ConsoleSection[]> | ConsoleSection[];
