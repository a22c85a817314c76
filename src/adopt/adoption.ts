import type Provider from 'oidc-provider';
import type { AdapterPayload } from 'oidc-provider';

import { adapterKeys, type StoreAdapter } from '../../adapters/store-adapter.ts';
import type { Logger } from '../host.ts';
import type { Store } from '../store/store.ts';
import { UnreadableRecordError } from './bounded.ts';
import { adoptingAdapter, erasingPrevious } from './endings.ts';
import { createImport, type ImportOptions, type ImportProgress } from './import.ts';
import { adoptKeys } from './keys.ts';
import { createMove } from './move.ts';
import { asRecordSource, previousModels, type PreviousAdapter, type RecordSourceInput } from './previous.ts';
import { readThrough } from './read-through.ts';
import { createRemovals } from './removals.ts';
import { createWindow } from './window.ts';

/** How long a moved record's previous copy stays (removals.ts). */
const GRACE_MS = 2000;

/** The window and the import, as the store records them. */
export interface AdoptionStatus {
  /** Whether a miss looks in the previous store (in this process, now). */
  open: boolean;
  /** Why it closed: the import finished, or the host's date passed. */
  closedBy: 'import' | 'date' | undefined;
  /** The host's date (ms since the epoch), if any. */
  closesAt: number | undefined;
  /** Whether a run of the import holds its lease now (in any process). */
  running: boolean;
  /** The import's progress as recorded (undefined: none ran). */
  import: Omit<ImportProgress, 'dryRun' | 'perSecond' | 'etaSeconds'> | undefined;
}

/** Taking over a running provider's records from its previous adapter (`previousAdapter`; docs/upgrading.md). */
export interface Adoption {
  /** Whether a miss looks in the previous store now (in this process). */
  readonly open: boolean;
  status(): Promise<AdoptionStatus>;
  /** The bulk import (docs/upgrading.md): resumable, paced, with progress and a dry run. */
  importRecords(options?: ImportOptions): Promise<ImportProgress>;
  /** This process' counts: lookups made in the previous store, records moved in (by model). */
  counts(): { lookups: number; moved: Record<string, number> };
}

export interface AdoptionDeps {
  store: Store;
  inner: StoreAdapter;
  logger: Logger;
  lifetimes: { clockTolerance: number; defaultTtl: number };
  previousAdapter: PreviousAdapter;
  closesAt: number | undefined;
  records: RecordSourceInput | undefined;
  checkEveryMs: number;
  /** How long a call to the previous store may take (a request's lookup is then answered 503; the plugin's redisTimeoutMs). */
  timeoutMs: number;
  /** The `sub` the person has at the site (pairwise included), through `via` when given, else the provider the plugin serves. */
  subject: (accountId: string, clientId: string, via?: Provider) => Promise<string | undefined>;
}

/** The adoption's parts: the adapter that reads through, the endings that reach the previous store, the import. */
export function createAdoption(deps: AdoptionDeps) {
  const { store, logger } = deps;
  const keys = adapterKeys(store.prefix);
  const adopt = adoptKeys(store.prefix);
  const previous = previousModels(deps.previousAdapter, deps.timeoutMs);
  const records = deps.records === undefined ? undefined : asRecordSource(deps.records);
  const window = createWindow({ store, keys: adopt, closesAt: deps.closesAt, checkEveryMs: deps.checkEveryMs });
  const removals = createRemovals({ previous, logger, graceMs: GRACE_MS });
  const moved = new Map<string, number>();
  let lookups = 0;
  const move = createMove({ store, keys, adopt, previous, lifetimes: deps.lifetimes, revokeGrant: deps.inner.revokeGrant, subject: deps.subject, removals, graceMs: GRACE_MS, logger, moved });
  // A previous store that fails or hangs answers 503, as the plugin's own does (bounded.ts): a miss would make a site
  // drop a live refresh token. A record it holds that cannot be read is not found (logged now and then, never its id).
  let unreadable = 0;
  const lookup = async (model: string, method: 'find' | 'findByUid' | 'findByUserCode', value: string): Promise<AdapterPayload | undefined> => {
    lookups += 1;
    try {
      return (await previous(model)[method]!(value)) || undefined;
    } catch (err) {
      if (!(err instanceof UnreadableRecordError)) throw err;
      if (unreadable++ % 1000 === 0) logger.warn('adoption: a record of the previous store cannot be read; it is left there and read as not found', { model, reason: err.message, times: unreadable });
      return undefined;
    }
  };
  const factory = readThrough(deps.inner.factory, { window, move, lookup });
  const adapter = adoptingAdapter(deps.inner, factory, { store, adopt, window, move });
  if (!records) logger.warn('oidc-signout-notify: previousAdapter without adoption.records: deleteAccount is refused while the window is open and the import needs its records named');

  const adoption: Adoption = {
    get open() {
      return window.open;
    },
    async status() {
      await window.refresh();
      const [recorded, lease] = await Promise.all([store.hgetall(adopt.progress), store.get(adopt.lease)]);
      const number = (name: string) => (recorded[name] === undefined || recorded[name] === '' ? undefined : Number(recorded[name]));
      const finishedAt = number('finishedAt');
      return {
        open: window.open,
        closedBy: finishedAt !== undefined ? 'import' : window.open ? undefined : 'date',
        closesAt: deps.closesAt,
        running: lease !== null,
        import: recorded.startedAt === undefined ? undefined : {
          seen: number('seen') ?? 0, moved: number('moved') ?? 0, alreadyMoved: number('alreadyMoved') ?? 0, expired: number('expired') ?? 0,
          gone: number('gone') ?? 0, refused: number('refused') ?? 0, failed: number('failed') ?? 0, unreadable: number('unreadable') ?? 0,
          total: number('total'), checkpoint: recorded.checkpoint || undefined, startedAt: number('startedAt')!, finishedAt,
        },
      };
    },
    importRecords: createImport({ store, adopt, previous, move, removals, graceMs: GRACE_MS, window, records, lifetimes: deps.lifetimes }),
    counts: () => ({ lookups, moved: Object.fromEntries(moved) }),
  };

  return {
    adoption,
    adapter,
    deleteAccount: <R>(inner: (accountId: string) => Promise<R>) => erasingPrevious(inner, { window, records, previous, logger }),
    close: () => removals.close(),
  };
}
