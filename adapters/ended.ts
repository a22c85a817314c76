import type { AdapterPayload } from 'oidc-provider';

/**
 * "Ended before" marks: what an operator or the person ended at once, without
 * enumerating it (lua/end_before.lua writes them, the reads compare with them).
 * - a site's: every grant of the site issued up to `grants` is over
 *   (endSiteAccess: a leaked secret, a compromised site);
 * - a person's: every grant issued up to `grants` is over
 *   (endAccountAccess), and every service session signed in up to
 *   `sessions` but the one named `keep` (sign out everywhere, of the others).
 * Marks are ms since the epoch. oidc-provider dates grants (`iat`) and
 * sign-ins (`loginTs`) in seconds; within the mark's own second the record's
 * last write (`t`, ms, kept beside it) tells whether it came before the mark
 * or after it (a sign-in right after "sign out everywhere" lives on).
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

/**
 * Whether something dated `seconds` (and last written at `writtenAt` ms, when
 * known) is at or before the mark `markMs`: an earlier second always; the
 * mark's own second only if it was written no later than the mark.
 */
function before(seconds: number, writtenAt: number | undefined, markMs: number): boolean {
  if (markMs <= 0) return false;
  const markSecond = Math.floor(markMs / 1000);
  if (seconds !== markSecond) return seconds < markSecond;
  return writtenAt === undefined || writtenAt <= markMs;
}

/** Whether a grant (oidc-provider's Grant payload) was ended by a mark. */
export function grantEnded(grant: AdapterPayload, marks: EndedMarks, writtenAt?: number): boolean {
  // A grant without iat (never written by oidc-provider 9) counts as issued at 0: any mark ends it.
  const iat = typeof grant.iat === 'number' ? grant.iat : 0;
  return before(iat, writtenAt, marks.siteGrants) || before(iat, writtenAt, marks.personGrants);
}

/** Whether a service session was ended by its person's mark (sign out everywhere, endAccountAccess). */
export function sessionEnded(session: AdapterPayload, marks: EndedMarks, writtenAt?: number): boolean {
  if (!session.accountId || session.uid === marks.keep) return false;
  const loginTs = typeof session.loginTs === 'number' ? session.loginTs : (typeof session.iat === 'number' ? session.iat : 0);
  return before(loginTs, writtenAt, marks.personSessions);
}

/** A grant or session as its reads hand it on: gone when a mark ended it. */
export function unlessEnded(model: 'Grant' | 'Session', payload: AdapterPayload | undefined, marks: EndedMarks, writtenAt?: number): AdapterPayload | undefined {
  if (!payload) return undefined;
  return (model === 'Grant' ? grantEnded(payload, marks, writtenAt) : sessionEnded(payload, marks, writtenAt)) ? undefined : payload;
}
