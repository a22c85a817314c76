/**
 * Key layout of the "ended before" marks (lua/end_before.lua): what an
 * operator or the person ended at once, read by the token, session and grant
 * reads and by /api/notify; documented in docs/redis-keys.md ("Redis keys"). Each
 * lives in the hash slot of what it ends (the site's, the person's).
 */
export function endedKeys(prefix: string) {
  return {
    /** A site's mark (endSiteAccess): hash { grants }. */
    site: (clientId: string) => `${prefix}site:{${clientId}}:ended`,
    /** A person's mark (endAccountAccess, sign out everywhere): hash { grants, sessions, keep }. */
    person: (accountId: string) => `${prefix}account:{${accountId}}:ended`,
  };
}
