import type { Adapter } from 'oidc-provider';

import type { Logger } from '../host.ts';

/** Previous copies removed at once, at most this many at a time. */
const AT_ONCE = 100;

/**
 * Removing the previous copy of a record that moved, a grace period after the
 * move: a request that looked in the plugin's store just before the move and
 * in the previous store just after still finds it there, and the claim sends
 * it to the moved copy (adopt_claim.lua); removed at once, that request would
 * find nothing anywhere. A removal lost with the process is made by the next
 * lookup or import that meets the copy (the moved mark says it moved).
 */
export function createRemovals(deps: { previous: (model: string) => Adapter; logger: Logger; graceMs: number }) {
  const queue: { model: string; id: string; due: number }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  let failures = 0;

  async function remove(batch: { model: string; id: string }[]): Promise<void> {
    for (let i = 0; i < batch.length; i += AT_ONCE) {
      await Promise.all(batch.slice(i, i + AT_ONCE).map(({ model, id }) => deps.previous(model).destroy(id).catch((err: Error) => {
        // Logged once in a while, not per record: the next lookup or import removes it.
        if (failures++ % 1000 === 0) deps.logger.warn('adoption: a previous copy could not be removed (it is removed when next met)', { model, reason: err.message });
      })));
    }
  }

  function schedule(): void {
    if (timer || draining || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      draining = drain(false).finally(() => {
        draining = undefined;
        schedule();
      });
    }, Math.max(0, queue[0]!.due - Date.now()));
    timer.unref();
  }

  async function drain(all: boolean): Promise<void> {
    const now = Date.now();
    let n = 0;
    while (n < queue.length && (all || queue[n]!.due <= now)) n += 1;
    await remove(queue.splice(0, n));
  }

  return {
    /** The previous copy goes after the grace period (or `inMs`). */
    later(model: string, id: string, inMs = deps.graceMs): void {
      const due = Date.now() + inMs;
      let at = queue.length;
      while (at > 0 && queue[at - 1]!.due > due) at -= 1;
      queue.splice(at, 0, { model, id, due });
      schedule();
    },
    /** The previous copy goes now (it expired, or moved long enough ago). */
    now(model: string, id: string): Promise<void> {
      return remove([{ model, id }]);
    },
    /** Makes every removal due by `time` (ms), once it is due: what an import records as done is removed first. */
    async through(time: number): Promise<void> {
      if (time > Date.now()) await new Promise((resolve) => setTimeout(resolve, time - Date.now()));
      if (draining) await draining;
      let n = 0;
      while (n < queue.length && queue[n]!.due <= time) n += 1;
      await remove(queue.splice(0, n));
    },
    /** Waits until every removal asked for so far is made (the last one's grace period included). */
    async settled(): Promise<void> {
      while (queue.length > 0 || draining) {
        if (draining) await draining;
        else await new Promise((resolve) => setTimeout(resolve, Math.max(0, queue[0]!.due - Date.now())));
        if (!draining) await drain(false);
      }
    },
    /** Makes every removal still waiting now (the process ends: no request is in flight any more). */
    async close(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (draining) await draining;
      await drain(true);
    },
  };
}

export type Removals = ReturnType<typeof createRemovals>;
