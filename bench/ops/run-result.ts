/**
 * What a load run asks for and what it gives back, shared by the two drivers:
 * autocannon's closed loop (./drive.ts) and the fixed rate (./open-loop.ts).
 */
export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  /** The next body; undefined when the supply (fresh tokens) has run out. */
  body: () => string | undefined;
  /** Whether a 2xx answer is the right one (e.g. `"active":true`); wrong ones count as errors. */
  expect?: (body: string) => boolean;
  /** Sees every right answer (e.g. to note the tokens it carries). */
  onOk?: (body: string) => void;
}

export interface Load {
  connections: number;
  /** Seconds; the run may end sooner when `supply` requests have been made. */
  duration?: number;
  /** Exactly this many requests (instead of a duration). */
  amount?: number;
  overallRate?: number;
  /** How many bodies `body()` can give (tokens minted); caps the run. */
  supply?: number;
}

export interface Latency {
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface RunResult {
  /** 2xx with the expected answer. */
  ok: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** 2xx whose body was not the expected answer. */
  wrong: number;
  statusCodes: Record<string, number>;
  seconds: number;
  rps: number;
  latency: Latency;
  /** Every 2xx latency, ms (to merge runs). */
  latencies: number[];
  /** The supply ran out before the duration was over. */
  ranOut: boolean;
}

export function percentiles(values: number[]): Latency {
  if (values.length === 0) return { p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]!, mean: sum / sorted.length };
}

/** A run's result from its counts and its 2xx latencies; the rate counts right answers only. */
export function runResult(counts: Omit<RunResult, 'rps' | 'latency' | 'latencies'>, latencies: number[]): RunResult {
  return { ...counts, rps: counts.ok / counts.seconds, latency: percentiles(latencies), latencies };
}
