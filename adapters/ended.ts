import type { AdapterPayload } from 'oidc-provider';

/**
 * "Ended before" marks: what an operator or the person ended at once, without
 * enumerating it (lua/end_before.lua writes them, the reads compare with them).
 * - a site's: every grant of the site issued at or before `grants` is over
 *   (endSiteAccess: a leaked secret, a compromised site);
 * - a person's: every grant issued at or before `grants` is over
 *   (endAccountAccess), and every service session signed in at or before
 *   `sessions` but the one named `keep` (sign out everywhere, of the others).
 * Seconds since the epoch, as oidc-provider's `iat` and `loginTs`: a grant
 * issued or a sign-in made in the same second as the ending ends with it.
 */
export interface EndedMarks {
  siteGrants: number;
  personGrants: number;
  personSessions: number;
  keep: string;
}

export const NO_MARKS: EndedMarks = { siteGrants: 0, personGrants: 0, personSessions: 0, keep: '' };

type MarkReply = (string | null)[] | null | undefined;

/** The marks as token_read and record_read answer them (HMGET replies, or nil where not read). */
export function decodeMarks(site: MarkReply, person: MarkReply): EndedMarks {
  return {
    siteGrants: Number(site?.[0] ?? 0) || 0,
    personGrants: Number(person?.[0] ?? 0) || 0,
    personSessions: Number(person?.[1] ?? 0) || 0,
    keep: person?.[2] ?? '',
  };
}

/** Whether a grant (oidc-provider's Grant payload) was ended by a mark. */
export function grantEnded(grant: AdapterPayload, marks: EndedMarks): boolean {
  // A grant without iat (never written by oidc-provider 9) counts as issued at 0: any mark ends it.
  const iat = typeof grant.iat === 'number' ? grant.iat : 0;
  return (marks.siteGrants > 0 && iat <= marks.siteGrants) || (marks.personGrants > 0 && iat <= marks.personGrants);
}

/** Whether a service session was ended by its person's mark (sign out everywhere, endAccountAccess). */
export function sessionEnded(session: AdapterPayload, marks: EndedMarks): boolean {
  if (!session.accountId || marks.personSessions === 0) return false;
  const loginTs = typeof session.loginTs === 'number' ? session.loginTs : (typeof session.iat === 'number' ? session.iat : 0);
  return loginTs <= marks.personSessions && session.uid !== marks.keep;
}

/** A grant or session as its reads hand it on: gone when a mark ended it. */
export function unlessEnded(model: 'Grant' | 'Session', payload: AdapterPayload | undefined, marks: EndedMarks): AdapterPayload | undefined {
  if (!payload) return undefined;
  return (model === 'Grant' ? grantEnded(payload, marks) : sessionEnded(payload, marks)) ? undefined : payload;
}
