/**
 * How the bench names what it writes into bench/results, and the index it
 * keeps there (README.md), so that the newest full run is the first thing a
 * reader finds:
 *
 *   <YYYY-MM-DD>-<HHMM>-<kind>[-<variant>].md     the run's start, UTC
 *
 * kind `full`: `npm run bench` with every operation on A, B, C and D, not
 * --quick, and no switch that changes what is measured (--d-reads-as-a,
 * --worker-in-process, --auto-pipelining); `partial`: any other
 * `npm run bench`; `instructions`: `npm run bench:instructions`. A run's CPU
 * profiles take its name with `-<operation>-<server>.cpuprofile` (they stay
 * on the machine: git ignores them).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export type RunKind = 'full' | 'partial' | 'instructions';

/** The file name of a run's results, without `.md`. */
export function resultsStem(startedAt: Date, kind: RunKind, variant?: string): string {
  const iso = startedAt.toISOString();
  return `${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}-${kind}${variant ? `-${variant}` : ''}`;
}

/** "2026-11-26 04:50 UTC" for a report's title. */
export const startedText = (startedAt: Date) => `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const KINDS: { kind: RunKind; heading: string }[] = [
  { kind: 'full', heading: 'Full runs (`npm run bench`)' },
  { kind: 'partial', heading: 'Partial runs (`npm run bench` with some operations or switches)' },
  { kind: 'instructions', heading: 'Instruction counts (`npm run bench:instructions`)' },
];

/** Newest first: by date, then time (the few counts named before this scheme carry none and go last in their day). */
function newestFirst(a: string, b: string): number {
  const key = (name: string) => `${name.slice(0, 10)} ${/^\d{4}-\d\d-\d\d-(\d{4})-/.exec(name)?.[1] ?? '    '}`;
  return key(b).localeCompare(key(a)) || b.localeCompare(a);
}

/** Writes `dir`/README.md: every results file by kind, newest first, each with its title; the newest full run on top. */
export async function writeIndex(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.md') && f !== 'README.md').sort(newestFirst);
  const titled = await Promise.all(names.map(async (name) => {
    const first = (await readFile(join(dir, name), 'utf8')).split('\n', 1)[0] ?? '';
    return { name, title: first.replace(/^#\s*/, '').replace(/\[([^\]]+)\]\([^)]*\)/g, '$1'), kind: /-(full|partial|instructions)\b/.exec(name)?.[1] as RunKind | undefined };
  }));
  const newestFull = titled.find((t) => t.kind === 'full');
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench` and `npm run bench:instructions`, which also rewrite this index after each run (bench/results-index.ts). A name is `<date>-<HHMM>-<kind>.md`, the run\'s start in UTC: `full` for `npm run bench` with every operation on A, B, C and D (not `--quick`, no switch that changes what is measured), `partial` for any other `npm run bench`, `instructions` for `npm run bench:instructions`. What the figures mean and the goals they are judged against: [docs/performance.md](../../docs/performance.md).',
    '',
    newestFull ? `**Newest full run: [${newestFull.name}](${newestFull.name})**: ${newestFull.title}` : 'No full run yet.',
    '',
  ];
  for (const { kind, heading } of KINDS) {
    const ofKind = titled.filter((t) => t.kind === kind);
    if (ofKind.length) lines.push(`## ${heading}`, '', ...ofKind.map((t) => `- [${t.name}](${t.name}): ${t.title}`), '');
  }
  const other = titled.filter((t) => !t.kind);
  if (other.length) lines.push('## Other', '', ...other.map((t) => `- [${t.name}](${t.name}): ${t.title}`), '');
  await writeFile(join(dir, 'README.md'), lines.join('\n'));
}
