/**
 * One module's report from its runs on two Redis layouts (single node and
 * Cluster): a mutant is killed when either run kills it, so code only one
 * layout reaches is measured where it runs. Mutants are matched by place and
 * replacement, and both runs must have made the same ones.
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface Position { line: number; column: number }
interface Mutant { id: string; mutatorName: string; replacement?: string; status: string; location: { start: Position; end: Position } }
export interface Report { files: Record<string, { mutants: Mutant[] }> }

/** Best first: the merged status is the better of the two. */
const RANK = ['Killed', 'Timeout', 'Survived', 'NoCoverage'];
const rank = (status: string) => { const at = RANK.indexOf(status); return at < 0 ? RANK.length : at; };
// Start and end: two mutants may start at one place (`a && b` and its `a`, both forced to true).
const place = (file: string, m: Mutant) => {
  const { start, end } = m.location;
  return `${file}:${start.line}:${start.column}-${end.line}:${end.column}:${m.mutatorName}:${m.replacement ?? ''}`;
};

export function mergeReports(first: Report, second: Report): Report {
  const other = new Map<string, Mutant>();
  for (const [file, { mutants }] of Object.entries(second.files)) for (const m of mutants) other.set(place(file, m), m);
  const merged = structuredClone(first);
  for (const [file, { mutants }] of Object.entries(merged.files)) {
    for (const m of mutants) {
      const twin = other.get(place(file, m));
      if (!twin) throw new Error(`the runs made different mutants: ${place(file, m)} is in one only`);
      other.delete(place(file, m));
      // Ignored (a marked equivalent) and errors stay as they are: both runs agree on those.
      if (rank(twin.status) < rank(m.status) && rank(m.status) < RANK.length) {
        m.status = twin.status;
        (m as { statusReason?: string }).statusReason = `on the Cluster: ${(twin as { statusReason?: string }).statusReason ?? twin.status}`;
      }
    }
  }
  if (other.size) throw new Error(`the runs made different mutants: ${[...other.keys()][0]} is in one only`);
  return merged;
}

/** Writes the merged report as JSON and as Stryker's HTML page (the first run's page, its embedded report swapped). */
export function writeMerged(report: Report, jsonFile: string, htmlTemplate: string, htmlFile: string): void {
  writeFileSync(jsonFile, JSON.stringify(report));
  const page = readFileSync(htmlTemplate, 'utf8');
  const line = /^(\s*app\.report = ).*;$/m;
  if (!line.test(page)) throw new Error(`${htmlTemplate}: no embedded report found to replace`);
  // As Stryker embeds it: "<" split so no "</script>" can close the tag early.
  writeFileSync(htmlFile, page.replace(line, (_, start: string) => `${start}${JSON.stringify(report).replace(/</g, '<"+"')};`));
}
