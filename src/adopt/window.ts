import type { Store } from '../store/store.ts';
import type { AdoptKeys } from './keys.ts';

/**
 * The window in which a miss looks in the previous store. It closes when the
 * bulk import has finished (recorded in the store, so every instance learns
 * it) or at the host's date, whichever comes first; once closed it stays so.
 * The store is asked at start and then at most once per `checkEveryMs`, and
 * only by a miss (beside its lookup in the previous store, not before it): a
 * process that finds every record in its own store never asks.
 */
export function createWindow(deps: { store: Store; keys: AdoptKeys; closesAt: number | undefined; checkEveryMs: number }) {
  const { store, keys, closesAt, checkEveryMs } = deps;
  let finishedAt: number | undefined;
  let checkedAt = 0;
  let checking: Promise<void> | undefined;

  const window = {
    /** Whether a miss looks in the previous store now. */
    get open(): boolean {
      return finishedAt === undefined && (closesAt === undefined || Date.now() < closesAt);
    },
    get finishedAt(): number | undefined {
      return finishedAt;
    },
    /** Asks the store whether an import finished, when it was not asked within `checkEveryMs` (never awaited by a request). */
    refresh(): Promise<void> {
      if (finishedAt !== undefined || checking || Date.now() - checkedAt < checkEveryMs) return checking ?? Promise.resolve();
      checking = store.hmget(keys.progress, ['finishedAt'])
        .then(([at]) => { if (at) finishedAt = Number(at); }, () => {})
        .finally(() => {
          checkedAt = Date.now();
          checking = undefined;
        });
      return checking;
    },
    /** The import finished in this process. */
    closeNow(at: number): void {
      finishedAt = at;
    },
  };
  void window.refresh();
  return window;
}

export type AdoptionWindow = ReturnType<typeof createWindow>;
