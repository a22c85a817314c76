/**
 * `npm run bench:instructions -- --names`: each function's own instructions
 * (self cost) in a callgrind dump of a server's main thread, with V8's
 * compiled code named. Callgrind sees JavaScript as anonymous addresses;
 * node's `--perf-basic-prof` makes V8 write the address range and name of
 * every piece of code it compiles to /tmp/perf-<pid>.map, which names them.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

import { areaOf as profileArea } from './profile.ts';

const run = promisify(execFile);

interface CodeRange { start: number; size: number; name: string }

/** Compiled code the map no longer names (V8 dropped it before the dump). */
const UNNAMED = 'unnamed code';

async function perfMap(file: string): Promise<CodeRange[]> {
  const ranges: CodeRange[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.+)$/.exec(line);
    if (match) ranges.push({ start: parseInt(match[1]!, 16), size: parseInt(match[2]!, 16), name: match[3]! });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

/** The code at `address`: of the ranges holding it, the last one V8 wrote before (code is moved and rewritten). */
function codeAt(ranges: CodeRange[], address: number): string | undefined {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]!.start <= address) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && address - ranges[i]!.start < 1 << 20; i--) {
    const r = ranges[i]!;
    // JS:*name is optimized code, ~ baseline, ^ Maglev: one function whatever its tier.
    if (address < r.start + r.size) return r.name.replace(/^JS:[*~^+]?/, 'JS:');
  }
  return undefined;
}

/** Self instructions per request of each function of `dump`, by name. */
export async function namedSelfCosts(dump: string, map: string, requests: number): Promise<Map<string, number>> {
  const [{ stdout }, ranges] = await Promise.all([
    run('callgrind_annotate', ['--threshold=100', dump], { maxBuffer: 256 * 1024 * 1024 }),
    perfMap(map),
  ]);
  const total = Number(/^([\d,]+) \([ \d.]+%\)\s+PROGRAM TOTALS/m.exec(stdout)?.[1]?.replaceAll(',', '') ?? 0);
  const costs = new Map<string, number>();
  for (const line of stdout.slice(stdout.indexOf('file:function')).split('\n')) {
    const match = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line);
    if (!match) continue;
    const cost = Number(match[1]!.replaceAll(',', ''));
    // A dump taken while the process runs gives the frames below the event loop the whole cost: no function's own.
    if (cost * 2 >= total) continue;
    const symbol = match[2]!.replace(/ \[[^\]]*\]$/, '');
    const address = /^\?\?\?:0x([0-9a-f]+)/.exec(symbol);
    const name = address ? codeAt(ranges, parseInt(address[1]!, 16)) ?? UNNAMED : symbol.replace(/^\?\?\?:/, '').replace(/'\d+$/, '');
    costs.set(name, (costs.get(name) ?? 0) + cost / requests);
  }
  return costs;
}

/**
 * Where a function's instructions belong, for the report's summary by area:
 * JavaScript by the areas of the CPU profiles (./profile.ts), the rest by
 * what of V8 or Node it is.
 */
export function areaOf(name: string): string {
  // "JS:name url:line:column", the url last.
  const js = /^JS:(.*?) ?(\S+):\d+:\d+$/.exec(name);
  if (js) return profileArea({ functionName: js[1]!, url: js[2]! });
  if (name === UNNAMED) return UNNAMED;
  if (name.startsWith('RegExp:')) return 'regular expressions';
  if (/Scaveng|Evacuat|IteratePointers|heap::|Heap::|MarkCompact|Marking|Sweep|Pretenuring|SizeFromMap/.test(name)) return 'garbage collector';
  if (name.startsWith('Builtins_')) return 'V8 builtins';
  if (name.startsWith('v8::')) return 'V8 runtime';
  if (/^node::|^uv_|^uv__|llhttp/.test(name)) return 'Node (native)';
  return 'native other (libc, OpenSSL)';
}
