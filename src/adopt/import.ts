import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { UnreadableRecordError } from './bounded.ts';
import type { AdoptKeys } from './keys.ts';
import { ImportRunningError, takeLease, type Lease } from './lease.ts';
import type { Move, MoveOutcome } from './move.ts';
import { found, type PreviousRecordId, type RecordSource } from './previous.ts';
import type { Removals } from './removals.ts';
import type { AdoptionWindow } from './window.ts';

export interface ImportOptions {
  /** Where the previous store's records are listed; default: the plugin's `adoption.records`. */
  records?: RecordSource | undefined;
  /** Counts what would move (found, expired, gone) and writes nothing: no record moved, no progress recorded. */
  dryRun?: boolean | undefined;
  /** Records looked up per second at most, so that live traffic keeps Redis (default 1000). */
  perSecond?: number | undefined;
  /** Records moved at once (default 50). */
  concurrency?: number | undefined;
  /** Called after each page of records and at the end. */
  onProgress?: ((progress: ImportProgress) => void) | undefined;
  /** Stops the import after the page in hand (its progress is recorded: a later run resumes). */
  signal?: AbortSignal | undefined;
  /** Runs again although an earlier import finished (from the start). */
  again?: boolean | undefined;
  /**
   * The provider made with the service's configuration, in a process that
   * serves none (a command): the sites' subjects (pairwise included) are
   * computed through it. Default: the provider the plugin is attached to.
   */
  provider?: Provider | undefined;
}

/** The counts of an import over one walk of the listing (a run that resumes adds to them; one that starts over counts afresh); a dry run's of that run. */
export interface ImportProgress {
  dryRun: boolean;
  /** Records of the listing handled. */
  seen: number;
  /** Moved in by the import (a dry run: would move). */
  moved: number;
  /** Moved already, by a request's read-through or by an earlier run cut short. */
  alreadyMoved: number;
  /** Past their lifetime: removed from the previous store, not moved. */
  expired: number;
  /** Listed but no longer in the previous store (moved and removed meanwhile, or gone by its lifetime). */
  gone: number;
  /** Ended here before they moved (a revoked grant, Block site): removed, not moved. */
  refused: number;
  /** Could not be read or moved this run: the previous store failed or did not answer in time (counted, and left for the next run). */
  failed: number;
  /** Held by the previous store but not records oidc-provider wrote (not JSON, not an object, another model's): left there, never moved. */
  unreadable: number;
  /** Records of the listing in all (when the listing can say), for the ETA. */
  total: number | undefined;
  /** Records handled per second in this run. */
  perSecond: number;
  /** Seconds left at this run's rate, when the total is known. */
  etaSeconds: number | undefined;
  /** The listing's position after the last page handled (a run cut short resumes at the last one recorded, a grace period behind). */
  checkpoint: string | undefined;
  startedAt: number;
  /** When the import finished (the window closed then), or undefined. */
  finishedAt: number | undefined;
}

const COUNTS = ['seen', 'moved', 'alreadyMoved', 'expired', 'gone', 'refused', 'failed', 'unreadable'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;

const OUTCOME: Record<MoveOutcome, keyof Counts> = {
  moved: 'moved', moved_before: 'alreadyMoved', here: 'alreadyMoved', expired: 'expired', refused: 'refused',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The bulk import: every record the listing names is moved as the
 * read-through moves one (move.ts: exactly once, the same claim), at a rate
 * that leaves Redis to live traffic. Its progress is recorded in the store
 * after each page (`P{adopt}:import`), so a run cut short (a crash, SIGKILL)
 * resumes at the last page recorded; records of a page it had begun were
 * moved once or not at all, and are met again as moved already. When the
 * listing is done and the last previous copies are removed, the import is
 * recorded finished and the window closes in every instance.
 */
export function createImport(deps: { store: Store; adopt: AdoptKeys; previous: (model: string) => Adapter; move: Move; removals: Removals; graceMs: number; window: AdoptionWindow; records: RecordSource | undefined; lifetimes: { clockTolerance: number; defaultTtl: number } }) {
  const { store, adopt } = deps;

  async function recorded(): Promise<Partial<Record<string, string>>> {
    return store.hgetall(adopt.progress);
  }

  async function one(record: PreviousRecordId, dryRun: boolean, via: Provider | undefined): Promise<keyof Counts> {
    try {
      const payload: AdapterPayload | undefined = (await deps.previous(record.model).find(record.id)) || undefined;
      if (!payload) return 'gone';
      if (dryRun) return found(payload, deps.lifetimes).lifetimeMs === 0 ? 'expired' : 'moved';
      return OUTCOME[await deps.move.move(record.model, record.id, payload, via)];
    } catch (err) {
      return err instanceof UnreadableRecordError ? 'unreadable' : 'failed';
    }
  }

  async function importRecords(options: ImportOptions = {}): Promise<ImportProgress> {
    const source = options.records ?? deps.records;
    if (!source) throw new TypeError('oidc-signout-notify: the import needs the previous store\'s listing: adoption.records, or the records option');
    const dryRun = options.dryRun ?? false;
    const perSecond = options.perSecond ?? 1000;
    const concurrency = options.concurrency ?? 50;
    if (!(perSecond > 0) || !Number.isInteger(concurrency) || concurrency < 1) throw new TypeError('oidc-signout-notify: the import\'s perSecond must be above 0 and its concurrency a positive integer');
    // A dry run writes nothing: it needs no lease, and runs beside a run that moves.
    if (dryRun) return run(source, options, true, perSecond, concurrency, undefined);
    const lease = await takeLease(store, adopt.lease);
    try {
      return await run(source, options, false, perSecond, concurrency, lease);
    } finally {
      await lease.release();
    }
  }

  async function run(source: RecordSource, options: ImportOptions, dryRun: boolean, perSecond: number, concurrency: number, lease: Lease | undefined): Promise<ImportProgress> {
    const before = dryRun || options.again ? {} : await recorded();
    // Counted over one walk of the listing: a run that resumes at a checkpoint adds to the counts recorded; one that
    // starts at the beginning (the first, or after a run whose records failed) counts afresh, meeting again what moved.
    const carried = !!before.checkpoint || !!before.finishedAt;
    const counts: Counts = Object.fromEntries(COUNTS.map((name) => [name, carried ? Number(before[name] ?? 0) : 0])) as Counts;
    const startedAt = Number(before.startedAt ?? Date.now());
    if (before.finishedAt && !dryRun) return { dryRun, ...progressOf(counts, Number(before.total ?? counts.seen), 0, undefined, before.checkpoint, startedAt, Number(before.finishedAt)) };
    const total = before.total !== undefined ? Number(before.total) : await source.count?.();
    if (!dryRun) {
      if (options.again) await store.del([adopt.progress]);
      await store.run(commands.hset(), [adopt.progress], ['startedAt', startedAt, ...(total !== undefined ? ['total', total] : []), ...(carried ? [] : COUNTS.flatMap((name) => [name, 0]))]);
    }

    const run = { startedMs: Date.now(), seen: 0 };
    let checkpoint = before.checkpoint || undefined;
    const report = (finishedAt?: number) => {
      const rate = run.seen / Math.max(0.001, (Date.now() - run.startedMs) / 1000);
      const progress = progressOf(counts, total, rate, rate > 0 && total !== undefined ? Math.max(0, total - counts.seen) / rate : undefined, checkpoint, startedAt, finishedAt);
      options.onProgress?.({ ...progress, dryRun });
      return { ...progress, dryRun };
    };

    // A page is recorded done once the previous copies it moved are removed (a grace period after its
    // moves): a run cut short resumes before any page whose copies may still be there, and meets them
    // again as moved already (then removed).
    const waiting: { checkpoint: string | undefined; counts: Counts; due: number }[] = [];
    const record = async (page: { checkpoint: string | undefined; counts: Counts; due: number }) => {
      await deps.removals.through(page.due);
      await store.run(commands.hset(), [adopt.progress], [...COUNTS.flatMap((name) => [name, page.counts[name]]), 'checkpoint', page.checkpoint ?? '']);
    };
    for await (const page of source.pages(checkpoint)) {
      for (let i = 0; i < page.records.length; i += concurrency) {
        const chunk = page.records.slice(i, i + concurrency);
        // Paced: this run never handles more than perSecond records a second.
        const due = run.startedMs + ((run.seen + chunk.length) / perSecond) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
        for (const outcome of await Promise.all(chunk.map((record) => one(record, dryRun, options.provider)))) {
          counts[outcome] += 1;
        }
        counts.seen += chunk.length;
        run.seen += chunk.length;
      }
      checkpoint = page.checkpoint || undefined;
      // Another run took the lease (this process was held up past it): its progress is the one recorded from now on.
      if (lease?.lost) throw new ImportRunningError(0, true);
      if (!dryRun) {
        waiting.push({ checkpoint, counts: { ...counts }, due: Date.now() + deps.graceMs });
        while (waiting.length > 0 && waiting[0]!.due <= Date.now()) await record(waiting.shift()!);
      }
      report();
      if (options.signal?.aborted) break;
    }
    if (dryRun) return report();
    for (const page of waiting) await record(page);
    if (options.signal?.aborted) return report();
    await deps.removals.settled();
    // Failed over the whole walk, a run cut short's included: a run that resumed past a page whose records failed
    // never met them again, and finishing would close the window on them.
    if (counts.failed > 0) {
      // Not finished: the next run goes over the whole listing again (what moved is met as gone or moved already).
      checkpoint = undefined;
      await store.run(commands.hset(), [adopt.progress], ['checkpoint', '']);
      return report();
    }
    const finishedAt = Date.now();
    await store.run(commands.hset(), [adopt.progress], ['finishedAt', finishedAt]);
    deps.window.closeNow(finishedAt);
    return report(finishedAt);
  }

  return importRecords;
}

function progressOf(counts: Counts, total: number | undefined, perSecond: number, etaSeconds: number | undefined, checkpoint: string | undefined, startedAt: number, finishedAt: number | undefined): Omit<ImportProgress, 'dryRun'> {
  return { ...counts, total, perSecond: Math.round(perSecond), etaSeconds: etaSeconds === undefined ? undefined : Math.ceil(etaSeconds), checkpoint, startedAt, finishedAt };
}
