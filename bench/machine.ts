/**
 * The machine's CPU during a run (Linux /proc/stat): how much of it the
 * hypervisor gave to other guests (such rounds measure the host, not the
 * code, and are run again) and how much no process wanted.
 */
import { readFileSync } from 'node:fs';

export type Ticks = { total: number; steal: number; idle: number } | undefined;

/** Total, stolen and idle (idle and I/O wait) CPU ticks so far; undefined off Linux. */
export function cpuTicks(): Ticks {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0, idle: (fields[3] ?? 0) + (fields[4] ?? 0) };
  } catch {
    return undefined;
  }
}

/** A timed round during which the hypervisor took more than this share of the CPU, %, is run again. */
export const STEAL_LIMIT = 8;

export const stolenPct = (r: { ticks: number; stolen: number }) => (r.ticks ? (100 * r.stolen) / r.ticks : 0);
