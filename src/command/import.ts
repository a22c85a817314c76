import type { AdoptionStatus } from '../adopt/adoption.ts';
import type { ImportProgress } from '../adopt/import.ts';
import { ImportRunningError, importPrevious } from '../adoption.ts';
import { EXIT, positive, UsageError } from './args.ts';
import type { HostModule } from './host-module.ts';
import { n, type Output } from './output.ts';

const counts = (p: Omit<ImportProgress, 'dryRun' | 'perSecond' | 'etaSeconds'>, dryRun: boolean) =>
  `${n(p.moved)} ${dryRun ? 'would move' : 'moved'}, ${n(p.alreadyMoved)} moved already, ${n(p.expired)} expired, ${n(p.gone)} gone, ${n(p.refused)} refused, ${n(p.failed)} failed, ${n(p.unreadable)} unreadable`;

const line = (p: ImportProgress) =>
  `import: ${n(p.seen)}${p.total === undefined ? '' : ` of ${n(p.total)}`} seen: ${counts(p, p.dryRun)}; ${n(p.perSecond)} a second${p.etaSeconds === undefined ? '' : `, about ${n(p.etaSeconds)} s left`}`;

function statusText(status: AdoptionStatus): string {
  const window = status.open ? 'open' : `closed (${status.closedBy === 'import' ? 'the import finished' : 'its date passed'})`;
  const recorded = status.import
    ? `recorded: ${n(status.import.seen)} seen: ${counts(status.import, false)}; ${status.import.finishedAt ? `finished ${new Date(status.import.finishedAt).toISOString()}` : 'not finished'}`
    : 'no run recorded';
  return `adoption window: ${window}; import ${status.running ? 'running now' : 'not running'}; ${recorded}`;
}

/**
 * `import`: importPrevious with the flags' options and the module's provider
 * (the sites' subjects), its progress on stderr. SIGINT or SIGTERM stops it
 * after the page in hand; a second ends the process.
 */
export async function importCommand(host: HostModule, values: Record<string, string | boolean | undefined>, out: Output): Promise<number> {
  const { adoption } = host.plugin;
  if (!adoption) throw new UsageError(`the plugin ${host.path} builds has no previousAdapter: there is nothing to import`);
  if (values.status) {
    const status = await adoption.status();
    out.result({ command: 'import', status }, statusText(status));
    return EXIT.done;
  }
  const options = { perSecond: positive(values, 'per-second', false), concurrency: positive(values, 'concurrency', true) };
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
    out.progress({ stopping: signal }, `import: ${signal}: stopping after the page in hand (again to end at once)`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let progress: ImportProgress;
  try {
    progress = await importPrevious(host.plugin, {
      ...options, provider: host.provider, dryRun: values['dry-run'] === true, again: values.again === true, signal: stop.signal,
      onProgress: (p) => out.progress({ progress: p }, line(p)),
    });
  } catch (err) {
    if (!(err instanceof ImportRunningError)) throw err;
    out.error('import_running', err.message, { heldForMs: err.heldForMs });
    return EXIT.importRunning;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const finished = progress.finishedAt !== undefined;
  const text = progress.dryRun
    ? `dry run: ${n(progress.seen)} records seen: ${counts(progress, true)} (nothing written)`
    : finished
      ? `import finished ${new Date(progress.finishedAt!).toISOString()}: ${n(progress.seen)} records seen: ${counts(progress, false)}; every instance stops looking in the previous store within adoption.checkEveryMs`
      : `import not finished: ${n(progress.seen)} records seen: ${counts(progress, false)}; ${stop.signal.aborted ? 'stopped by a signal' : 'records failed'}: run it again`;
  out.result({ command: 'import', finished, progress }, text);
  if (stop.signal.aborted) return EXIT.notFinished;
  return progress.dryRun || finished ? EXIT.done : EXIT.notFinished;
}
