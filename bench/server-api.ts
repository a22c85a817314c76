/**
 * What a server process of the benchmark (bench/server-process.ts) answers
 * on its IPC channel, and the shapes of its answers: the orchestrator
 * (bench/run.ts and the operations) and bench/instructions.ts call it.
 */
import type { TokenKind } from './mint.ts';
import type { ProfileSummary } from './profile.ts';
import type { FloorRoute } from './servers.ts';

export interface Counters {
  /** The plugin store's own counters (`store.commandsSent`, `store.roundTrips`). */
  store: { commands: number; roundTrips: number };
  /** Everything on the process' Redis connection, BullMQ included (bench/servers.ts countWire). */
  wire: { commands: number; roundTrips: number; byName: Record<string, number>; byScript: Record<string, number> };
  warnings: number;
  errors: number;
  /** B: entries in its in-memory adapter. */
  entries?: number;
  /** CPU time this process used so far (user + system), µs. */
  cpuMicros: number;
}

export interface GrantRevokeTiming {
  k: number;
  samples: number;
  /** Median wall time of revokeGrant, ms. */
  ms: number;
  commands: number;
  roundTrips: number;
  /** Tokens of the grant still found afterwards (must be 0). */
  left: number;
}

export interface InboxPageTiming {
  messages: number;
  calls: number;
  /** Median wall time of one page, ms. */
  ms: number;
  p99: number;
  commands: number;
  roundTrips: number;
  items: number;
}

/** The calls a server process answers. B, C and D answer the token calls only (C and D: wireCount too, D: setFloor). */
export type ServerApi = {
  info(arg: undefined): Promise<{ kind: 'A' | 'B' | 'C' | 'D'; issuer: string; expiresIn: Record<string, number> }>;
  /** Makes `count` accounts (in memory, on every server alike) that tokens are spread over. */
  accounts(arg: { count: number }): Promise<string[]>;
  mint(arg: { kind: TokenKind; count: number }): Promise<string[]>;
  counters(arg: undefined): Promise<Counters>;
  /** [commands, round trips] on A's (or C's, D's) connection so far (cheap, for one request at a time). */
  wireCount(arg: undefined): Promise<[number, number]>;
  /** D: the route of the operation about to run and its round trips (undefined: none). */
  setFloor(arg: FloorRoute | undefined): Promise<void>;
  /** Connects accounts [from, from + count) to the site (A), as a sign-in does; returns their `sub`s. */
  connectPeople(arg: { from: number; count: number }): Promise<string[]>;
  /** Memory test set-up and work (A): see run.ts "memory". */
  memoryPrepare(arg: { kind: 'access' | 'refresh' | 'grant'; count: number }): Promise<void>;
  memoryCreate(arg: { kind: 'access' | 'refresh' | 'grant'; count: number }): Promise<string[]>;
  revokeGrant(arg: { k: number; samples: number }): Promise<GrantRevokeTiming>;
  /** One page of each inbox, the inboxes taking turns call by call. */
  inboxPages(arg: { inboxes: { accountId: string; messages: number }[]; calls: number; size: number }): Promise<InboxPageTiming[]>;
  /** Removes the letters waiting in the queue (op 5 leaves thousands). */
  drainLetters(arg: undefined): Promise<void>;
  pendingLetters(arg: undefined): Promise<number>;
  startLetterWorker(arg: undefined): Promise<void>;
  /** Stops this process' letter worker once the letters in hand are sent (the rest stay queued). */
  stopLetterWorker(arg: undefined): Promise<void>;
  profileStart(arg: undefined): Promise<void>;
  profileStop(arg: { file: string }): Promise<ProfileSummary>;
  close(arg: undefined): Promise<void>;
};
