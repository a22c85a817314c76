import { randomUUID } from 'node:crypto';

import type { Store } from '../store/store.ts';
import { adoptLease } from './scripts.ts';

/** How long the import's lease holds without renewal: a run killed by SIGKILL blocks the next one this long at most. */
export const LEASE_MS = 15_000;
const RENEW_EVERY_MS = 5_000;

/** Another run of the bulk import holds the store's lease (lua/adopt_lease.lua): one run at a time per store. */
export class ImportRunningError extends Error {
  /** When the other run's lease lapses unless renewed (ms from now). */
  readonly heldForMs: number;

  constructor(heldForMs: number, lost = false) {
    super(lost
      ? 'oidc-signout-notify: another run of the import took its lease while this one was held up; this one stopped (its progress is recorded up to its last page)'
      : `oidc-signout-notify: another run of the import is under way (its lease holds for ${Math.ceil(heldForMs / 1000)} s more unless renewed): one run at a time per store`);
    this.heldForMs = heldForMs;
  }
}

export interface Lease {
  /** Whether another run took the lease since (this run then stops). */
  readonly lost: boolean;
  release(): Promise<void>;
}

/** Takes the import's lease (or throws ImportRunningError) and renews it until released. */
export async function takeLease(store: Store, key: string): Promise<Lease> {
  const holder = randomUUID();
  const hold = () => store.run(adoptLease(), [key], [holder, 'hold', LEASE_MS]) as Promise<[number, number?]>;
  const [held, left] = await hold();
  if (held !== 1) throw new ImportRunningError(left ?? LEASE_MS);
  let lost = false;
  // A renewal Redis did not answer is tried again at the next; the lease lapses only after LEASE_MS without one.
  const timer = setInterval(() => { hold().then(([still]) => { if (still !== 1) lost = true; }, () => {}); }, RENEW_EVERY_MS);
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    async release() {
      clearInterval(timer);
      await store.run(adoptLease(), [key], [holder, 'give', 0]).catch(() => {});
    },
  };
}
