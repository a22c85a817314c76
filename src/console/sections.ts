import type { ConsolePerson, ConsoleSection, ConsoleSections } from '../host.ts';

const SECTION_ID = /^[a-z][a-z0-9-]{0,40}$/;
/** Ids the plugin's own sections and notices use. */
const TAKEN = new Set(['sites', 'senders', 'inbox', 'language', 'orgs', 'notice', 'main', 'logouts']);
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
