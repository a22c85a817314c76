/** The adoption's keys; documented in docs/redis-keys.md. */
export function adoptKeys(prefix: string) {
  return {
    /** A record moved in from the previous store (hash { at }), beside it, for as long as it may live. */
    moved: (recordKey: string) => `${recordKey}:moved`,
    /**
     * Block site, Remove access or theft while the window was open (ms): every
     * grant of the person at the site still in the previous store is refused
     * when it would move in.
     */
    personSiteEnded: (accountId: string, clientId: string) => `${prefix}account:{${accountId}}:ended:${clientId}`,
    /** The bulk import's progress (hash { checkpoint, seen, moved, ..., startedAt, finishedAt, total }). */
    progress: `${prefix}{adopt}:import`,
    /** The run of the import under way (string: its id), renewed while it runs (lease.ts). */
    lease: `${prefix}{adopt}:import:lease`,
  };
}

export type AdoptKeys = ReturnType<typeof adoptKeys>;
