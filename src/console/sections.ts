import type { Locale } from '../i18n/index.ts';

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

const SECTION_ID = /^[a-z][a-z0-9-]{0,40}$/;
/** Ids the plugin's own sections and notices use. */
const TAKEN = new Set(['sites', 'senders', 'inbox', 'language', 'orgs', 'notice', 'main']);
const SCRIPT_PATH = /^\/[\w./-]+\.js$/;
/** A `done` value the host may use for its notices. */
export const HOST_NOTICE = /^[a-z][a-z0-9_]{0,40}$/;

/** The host's sections, checked: a bad id or script path is a host bug, reported as one (a TypeError). */
export async function hostSections(sections: ConsoleSections | undefined, person: ConsolePerson): Promise<ConsoleSection[]> {
  if (!sections) return [];
  const list = await sections(person);
  const seen = new Set<string>();
  for (const section of list) {
    if (!SECTION_ID.test(section.id) || TAKEN.has(section.id) || seen.has(section.id)) {
      throw new TypeError(`oidc-signout-notify: console section id "${section.id}" must be unique, lower-case letters, digits and hyphens, and none of the console's own`);
    }
    seen.add(section.id);
    for (const script of section.scripts ?? []) {
      if (!SCRIPT_PATH.test(script) || script.includes('..')) throw new TypeError(`oidc-signout-notify: console section "${section.id}": script "${script}" must be a .js path on the service's own origin`);
    }
  }
  return list;
}
