import { AsyncLocalStorage } from 'node:async_hooks';

/** How the embedded mode's in-process queue (below) tells its owner of each try's end. */
export interface InProcessQueueHooks<J, R> {
  /** The job's id: the same id queued twice while the first is not finished is one job. */
  id(job: J): string;
  attempts: number;
  /** First retry after this many ms; each next one waits twice as long (as BullMQ's exponential backoff). */
  backoffMs: number;
  /** A new job's first try waits this long (BullMQ's `delay`); at once when absent. */
  firstDelayMs?: number | undefined;
  concurrency: number;
  /** A failure not worth trying again (BullMQ's UnrecoverableError). */
  permanent?(err: Error): boolean;
  done?(job: J, result: R): void;
  retrying?(job: J, attempt: number, err: Error): void;
  givenUp?(job: J, attempt: number, err: Error): void;
}

/**
 * The embedded mode's twin of a BullMQ queue and its worker (./durable.ts):
 * in this process only, with the same concurrency, tries, delay and
 * backoff. Like everything in the embedded store, jobs not finished are
 * lost when the process stops. Tries run outside the request that queued
 * them, as BullMQ's worker does (a timer would otherwise carry the
 * request's async context along). Starting, stopping and closing are safe
 * to repeat.
 */
export function inProcessQueue<J, R>(hooks: InProcessQueueHooks<J, R>) {
  // Ids queued and not finished.
  const known = new Set<string>();
  const waiting: { job: J; attempt: number }[] = [];
  // Timers (a first delay, a retry's backoff) and the job each brings back (drop takes it).
  const timers = new Map<NodeJS.Timeout, J>();
  let running = 0;
  let closed = false;
  // The job and which try this is (the first is 1).
  let process: ((job: J, attempt: number) => Promise<R>) | undefined;
  // Wakes stopWorker() when the last job in hand is done.
  let idle: (() => void) | undefined;
  const outside = AsyncLocalStorage.snapshot();

  const later = (job: J, attempt: number, ms: number) => outside(() => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      waiting.push({ job, attempt });
      pump();
    }, ms);
    timer.unref();
    timers.set(timer, job);
  });

  function pump(): void {
    while (process && !closed && running < hooks.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      running += 1;
      // Out of hand before its retry is timed, so pending() never counts it twice.
      process(next.job, next.attempt + 1).then((result) => {
        running -= 1;
        known.delete(hooks.id(next.job));
        hooks.done?.(next.job, result);
      }, (err: Error) => {
        running -= 1;
        const attempt = next.attempt + 1;
        if (hooks.permanent?.(err) || attempt >= hooks.attempts) {
          known.delete(hooks.id(next.job));
          hooks.givenUp?.(next.job, attempt, err);
          return;
        }
        hooks.retrying?.(next.job, attempt, err);
        later(next.job, attempt, hooks.backoffMs * 2 ** (attempt - 1));
      }).finally(() => {
        pump();
        if (running === 0) idle?.();
      });
    }
  }

  return {
    async add(job: J): Promise<void> {
      const id = hooks.id(job);
      if (known.has(id)) return;
      known.add(id);
      if (hooks.firstDelayMs) return later(job, 0, hooks.firstDelayMs);
      waiting.push({ job, attempt: 0 });
      outside(() => queueMicrotask(pump));
    },
    startWorker(fn: (job: J, attempt: number) => Promise<R>): void {
      if (closed) return;
      process = fn;
      pump();
    },
    async stopWorker(): Promise<void> {
      process = undefined;
      if (running > 0) await new Promise<void>((resolve) => { idle = resolve; });
      idle = undefined;
    },
    async pending(): Promise<number> {
      return waiting.length + running + timers.size;
    },
    /** The jobs not tried yet or waiting to be tried again (the objects themselves: a change is what their next try gets). */
    jobs(): J[] {
      return [...timers.values(), ...waiting.map(({ job }) => job)];
    },
    /** Takes out the jobs waiting or waiting to be tried again that match (one in hand finishes); returns how many. */
    drop(matches: (job: J) => boolean): number {
      const kept = waiting.filter(({ job }) => !matches(job));
      let dropped = waiting.length - kept.length;
      for (const { job } of waiting) if (matches(job)) known.delete(hooks.id(job));
      waiting.splice(0, waiting.length, ...kept);
      for (const [timer, job] of timers) {
        if (!matches(job)) continue;
        clearTimeout(timer);
        timers.delete(timer);
        known.delete(hooks.id(job));
        dropped += 1;
      }
      return dropped;
    },
    async close(): Promise<void> {
      closed = true;
      for (const timer of timers.keys()) clearTimeout(timer);
      timers.clear();
    },
  };
}
