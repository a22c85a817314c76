/**
 * What the benchmark keeps of its runs (bench/run.ts and the operations) and
 * the arithmetic on it, shared by the orchestration, the targets
 * (bench/targets.ts) and the report.
 */
import { percentiles, type Latency, type RunResult } from './ops/run-result.ts';
import type { IoredisCost } from './ops/ioredis-cost.ts';
import type { HttpOp, HttpOpName } from './ops/oauth.ts';
import type { RaceResult } from './ops/race.ts';
import type { TextResult } from './ops/text.ts';
import type { ProfileSummary } from './profile.ts';
import type { Ticks } from './machine.ts';
import type { BenchOptions } from './options.ts';
import type { RunKind } from './results-index.ts';
import type { GrantRevokeTiming, InboxPageTiming } from './server-api.ts';

/**
 * A: the plugin on Redis; B: plain oidc-provider in memory (the bound); C: plain oidc-provider on the naive Redis adapter (the peer);
 * D: B plus A's round trips as PINGs (the floor of A's round trips).
 */
export type ServerName = 'A' | 'B' | 'C' | 'D';

/** A load run with the CPU each party used: the server process, Redis (server-wide) and this process (autocannon). */
export interface Measured extends RunResult {
  requests: number;
  serverCpu: number;
  redisCpu: number;
  clientCpu: number;
  /** Machine CPU ticks during the run, how many the hypervisor gave to other guests, and how many no process wanted (idle and I/O wait). */
  ticks: number;
  stolen: number;
  idle: number;
}

export interface Aggregate {
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  wrong: number;
  latency: Latency;
  perRound: number[];
  ranOut: boolean;
  statusCodes: Record<string, number>;
  /** CPU µs per request: the server process, Redis (server-wide), autocannon. */
  cpu: { server: number; redis: number; client: number };
  /** Share of the machine's CPU the hypervisor gave to other guests during the runs, %. */
  steal: number;
  /** Share of the machine's CPU no process wanted during the runs, %: near 0, the cores were full. */
  idle: number;
}

export interface Sequential {
  n: number;
  latency: Latency;
  failures: number;
  /** A only. */
  storeCommands?: number;
  storeRoundTrips?: number;
  wireCommands?: number;
  wireRoundTrips?: number;
  /** Round trips of the typical request, and of the worst one. */
  wireRoundTripsMedian?: number;
  wireRoundTripsMax?: number;
  wireByName?: string;
  /** INFO commandstats, server-wide: commands inside scripts included, other clients' too. */
  serverCalls?: number;
  /** Redis' own time running the commands the server sent (INFO commandstats usec; a script's includes what it runs), µs per request. */
  redisExecMicros?: number;
  serverByName?: string;
}

export interface OpResult {
  op: HttpOp;
  byServer: Partial<Record<ServerName, Aggregate>>;
  sequential: Partial<Record<ServerName, Sequential>>;
}

export function aggregate(runs: Measured[]): Aggregate {
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const ok = runs.reduce((s, r) => s + r.ok, 0);
  const statusCodes: Record<string, number> = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    rps: ok / seconds,
    ok,
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    wrong: runs.reduce((s, r) => s + r.wrong, 0),
    latency: percentiles(runs.flatMap((r) => r.latencies)),
    perRound: runs.map((r) => r.rps),
    cpu: {
      server: runs.reduce((s, r) => s + r.serverCpu, 0) / runs.reduce((s, r) => s + r.requests, 0),
      redis: runs.reduce((s, r) => s + r.redisCpu, 0) / runs.reduce((s, r) => s + r.requests, 0),
      client: runs.reduce((s, r) => s + r.clientCpu, 0) / runs.reduce((s, r) => s + r.requests, 0),
    },
    ranOut: runs.some((r) => r.ranOut),
    statusCodes,
    steal: (100 * runs.reduce((s, r) => s + r.stolen, 0)) / Math.max(1, runs.reduce((s, r) => s + r.ticks, 0)),
    idle: (100 * runs.reduce((s, r) => s + r.idle, 0)) / Math.max(1, runs.reduce((s, r) => s + r.ticks, 0)),
  };
}

export const failures = (a: Aggregate) => a.non2xx + a.errors + a.wrong;

export const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One server's rate over another's (A's over B's, D's over B's), round by round (the servers ran in turns), and their median. */
export function perRoundRatio(a: Aggregate, other: Aggregate): { median: number; rounds: number[] } {
  const rounds = a.perRound.map((x, i) => x / other.perRound[i]!);
  return { median: median(rounds), rounds };
}

export interface GrowthRow {
  level: string; live: number; op: HttpOpName; title: string; requests: number; rps: number; p50: number; p99: number;
  /** Redis commands per request on A's connection, the "last used" writes left out. */
  commands: number;
  /** "Last used" writes of their own per request (a refresh's ride inside its one script): one per site and person a minute (docs/console.md "Last used"), so they depend on who the level's tokens belong to, not on the level. */
  lastUsed: number;
  /** Redis' own execution time of the request's commands, µs (INFO commandstats usec). */
  exec: number;
  failures: number; cpu: Aggregate['cpu']; steal: number;
}

/** Redis memory per record (bench/run.ts "memory"). */
export interface MemoryRow { what: string; perRecord: number; memoryUsage?: number; count: number; encoding?: string }

/** What /api/notify did at a fixed rate with the letter worker sending (bench/notify-ops.ts). */
export interface NotifyAtRate {
  rate: number;
  at?: Aggregate;
  /** The same rate without a worker (5b′). */
  alone?: Aggregate;
  letters?: {
    letters: number;
    seconds: number;
    perSecond: number;
    /** Cores the worker process kept busy during the counted runs (undefined: the worker ran in A's process). */
    workerCores?: number;
    /** Cores the SMTP sink (the mail server's stand-in, on the same machine) kept busy meanwhile. */
    sinkCores?: number;
  };
}

export interface ProfileRow { op: string; server: ServerName; file: string; rps: number; requests: number; summary: ProfileSummary }

/** Everything the operations of one run collect for the report (bench/report-md.ts). */
export interface Collected {
  results: OpResult[];
  notes: string[];
  profiles: ProfileRow[];
  raceRows: { server: ServerName; result: RaceResult }[];
  notifyAtRate?: Aggregate;
  notifyAtRateAlone?: Aggregate;
  lettersDuringRate?: NotifyAtRate['letters'];
  letterResult?: { letters: number; seconds: number; perSecond: number; received: number; pendingAfter: number };
  clientCost: IoredisCost[];
  text: TextResult[];
  extraSequential: { label: string; seq: Sequential }[];
  memoryRows: MemoryRow[];
  growthRows: GrowthRow[];
  /** Redis alone: its time for one HGET of a random filler record, per growth level. */
  lookupRows: { level: string; records: number; micros: number }[];
  grantRows: GrantRevokeTiming[];
  inboxRows: InboxPageTiming[];
  fillSeconds: number;
  unfillSeconds: number;
  growthRetries: number;
  stealRetries: string[];
  /** The adoption window (bench/ops/adoption.ts). */
  adoption?: AdoptionResult;
}

export const emptyCollected = (): Collected => ({
  results: [], notes: [], profiles: [], raceRows: [], clientCost: [], text: [], extraSequential: [], memoryRows: [],
  growthRows: [], lookupRows: [], grantRows: [], inboxRows: [], fillSeconds: 0, unfillSeconds: 0, growthRetries: 0, stealRetries: [],
});

/** Everything the run measured, and how. */
export interface ReportInput extends Collected {
  opts: BenchOptions;
  kind: RunKind;
  startedAt: Date;
  redisInfo: { version: string; keys: number };
  loadBefore: number[];
  ticksBefore: Ticks;
  constants: { STEAL_LIMIT: number; MAX_RETRIES: number; GROWTH_BATCH: number; SMALL_FILLER: number; INBOX_PAGE: number; growthReps: number };
}

/** The adoption case (bench/ops/adoption.ts). */
export interface AdoptionRow {
  case: string;
  /** Per request, one at a time. */
  storeCommands: number;
  storeRoundTrips: number;
  previousLookups: number;
  latency: Latency;
  /** Median of the timed rounds (right answers per second). */
  rps: number;
  failures: number;
}

export interface AdoptionResult {
  rows: AdoptionRow[];
  /** Moved over native, the median of the rounds' ratios. */
  ratio: number;
  rounds: number;
}
