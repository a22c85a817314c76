/**
 * The benchmark's report: the markdown `npm run bench` prints and writes to
 * bench/results/<date>.md, from what bench/run.ts measured.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

import type { IoredisCost } from './ops/ioredis-cost.ts';
import type { HttpOpName } from './ops/oauth.ts';
import type { RaceResult } from './ops/race.ts';
import type { TextResult } from './ops/text.ts';
import { selfDiff, type ProfileSummary } from './profile.ts';
import { bytes, check, int, ms, num, table } from './report.ts';
import { failures, perRoundRatio, type Aggregate, type GrowthRow, type MemoryRow, type OpResult, type Sequential, type ServerName } from './results.ts';
import type { GrantRevokeTiming, InboxPageTiming } from './server-process.ts';
import { floorMismatch, floorOf, growthTargets, roundTripCount, raceTargets, targetIntrospect, targetNotify, targetRefresh, type Floor, type NotifyAtRate, type Target } from './targets.ts';

/** What D is, under the Summary table (the README's). */
const FLOOR_PARAGRAPH = 'D is B plus, on the route of the operation, the N Redis round trips A makes for it (N after D/B: A\'s figures, bench/ops/oauth.ts D_ROUND_TRIPS; a ⚠ marks an operation where A measured other than N), each a PING awaited in turn on an ioredis client with A\'s options, in a Koa middleware before oidc-provider\'s route; the host, the unbounded memory adapter and the accounts are B\'s. A PING is the least work Redis can be asked for, so D/B is the bound of any design with N sequential round trips per request on this machine: the CPU the round trips take from the server process (socket writes, ioredis\' command and reply handling, the wakeups) and from Redis on the same cores. A/D is what the plugin does beyond its round trips; D/B, not 1, is the ceiling of A/B.';

/** What kept the machine's cores busy during 5b: the answers' side and the letters' side. */
function coresDuringRate(at: Aggregate, letters: NotifyAtRate['letters'], alone: Aggregate | undefined): string {
  const cores = (microsPerRequest: number) => num((microsPerRequest * at.rps) / 1e6);
  const worker = letters?.workerCores !== undefined ? `, the letter worker ${num(letters.workerCores)}` : '';
  const sink = letters?.sinkCores !== undefined ? `, the SMTP sink (the mail server's stand-in) ${num(letters.sinkCores)}` : '';
  return ` Cores kept busy meanwhile (of ${cpus().length}): the server ${cores(at.cpu.server)}, Redis ${cores(at.cpu.redis)}, the load driver ${cores(at.cpu.client)}${worker}${sink}; the machine's CPU was idle ${num(at.idle, 0)} % of the time${alone ? ` (${num(alone.idle, 0)} % at the same rate without a worker, 5b′)` : ''}.`;
}

/**
 * Where A's CPU per request goes beyond B's: the round trips (D − B) and the plugin's own work (A − D),
 * when D ran in the operation.
 */
function floorSplit(r: OpResult, floor: Floor | undefined): string {
  const [a, b, d] = [r.byServer.A, r.byServer.B, r.byServer.D];
  if (!floor || !a || !b || !d) return '';
  const trips = roundTripCount(floor.n);
  return ` D, B with A's ${trips} as PINGs, used ${int(d.cpu.server)} µs per request: the round trips cost D − B = ${int(d.cpu.server - b.cpu.server)} µs, the plugin's own work beyond them A − D = ${int(a.cpu.server - d.cpu.server)} µs; D/B ${num(floor.db?.median ?? NaN)} is the bound of ${trips} here.${floorMismatch(floor)}`;
}

/** The options of the run, as the report states them. */
export interface BenchOptions {
  quick: boolean;
  duration: number;
  connections: number;
  rounds: number;
  warmup: number;
  sequential: number;
  notifyRate: number;
  raceTrials: number;
  withC: boolean;
  withD: boolean;
  dReadsAsA: boolean;
  workerInProcess: boolean;
  workerNice: number;
  letters: number;
  letterConcurrency: number;
  memoryCount: number;
  growthTokens: number;
  profile: boolean;
  autoPipelining: boolean;
  redisUrl: string;
  out: string;
  ops: ReadonlySet<string>;
}

type Ticks = { total: number; steal: number; idle: number } | undefined;

/** Everything the run measured, and how. */
export interface ReportInput {
  text: TextResult[];
  opts: BenchOptions;
  date: string;
  startedAt: Date;
  redisInfo: { version: string; keys: number };
  loadBefore: number[];
  ticksBefore: Ticks;
  cpuTicks: () => Ticks;
  results: OpResult[];
  notes: string[];
  profiles: { op: string; server: ServerName; file: string; rps: number; requests: number; summary: ProfileSummary }[];
  raceRows: { server: ServerName; result: RaceResult }[];
  notifyAtRate?: Aggregate;
  notifyAtRateAlone?: Aggregate;
  lettersDuringRate?: NotifyAtRate['letters'];
  letterResult?: { letters: number; seconds: number; perSecond: number; received: number; pendingAfter: number };
  clientCost: IoredisCost[];
  extraSequential: { label: string; seq: Sequential }[];
  memoryRows: MemoryRow[];
  growthRows: GrowthRow[];
  lookupRows: { level: string; records: number; micros: number }[];
  grantRows: GrantRevokeTiming[];
  inboxRows: InboxPageTiming[];
  fillSeconds: number;
  unfillSeconds: number;
  growthRetries: number;
  stealRetries: string[];
  constants: { STEAL_LIMIT: number; MAX_RETRIES: number; GROWTH_BATCH: number; SMALL_FILLER: number; INBOX_PAGE: number; growthReps: number };
}

export function report(input: ReportInput): string {
  const {
    text, opts, date, startedAt, redisInfo, loadBefore, ticksBefore, cpuTicks, results, notes, profiles, raceRows,
    notifyAtRate, notifyAtRateAlone, lettersDuringRate, letterResult, clientCost, extraSequential, memoryRows, growthRows, lookupRows,
    grantRows, inboxRows, fillSeconds, unfillSeconds, growthRetries, stealRetries,
  } = input;
  const { STEAL_LIMIT, MAX_RETRIES, GROWTH_BATCH, SMALL_FILLER, INBOX_PAGE } = input.constants;
  const growthReps = () => input.constants.growthReps;
  const notifyState = (): NotifyAtRate => ({ rate: opts.notifyRate, at: notifyAtRate, alone: notifyAtRateAlone, letters: lettersDuringRate });
  const lines: string[] = [];
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const loadAfter = loadavg();
  lines.push(`# oidc-signout-notify benchmark, ${date}`, '');
  lines.push(`- Machine: ${availableParallelism()} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM; Node ${process.version}; Redis ${redisInfo.version} at ${opts.redisUrl.replace(/\/\/[^@]*@/, '//')}`);
  const ticksAfter = cpuTicks();
  const steal = ticksBefore && ticksAfter ? (100 * (ticksAfter.steal - ticksBefore.steal)) / (ticksAfter.total - ticksBefore.total) : NaN;
  lines.push(`- Started ${startedAt.toISOString()}, took ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s. Load average (1 min) ${num(loadBefore[0]!)} before, ${num(loadAfter[0]!)} after; CPU stolen by the hypervisor during the run: ${num(steal, 1)} %. Other work shares this machine and this Redis (${int(redisInfo.keys)} keys of others at start), so rates move by 10-30 % between runs: read A/B within a round, and the CPU per request, rather than single figures.`);
  lines.push(`- Options: ${opts.quick ? '--quick, ' : ''}duration ${opts.duration} s, ${opts.connections} connections, ${opts.rounds} round(s) per server (${['A', 'B', opts.withC && 'C', opts.withD && 'D (operations 1-4)'].filter(Boolean).join(', ')} taking turns, a different one first each round; ${MAX_RETRIES ? `a round with more than ${STEAL_LIMIT} % of the CPU stolen is run again` : 'no reruns'}) after ${opts.warmup} warm-up requests, ${opts.sequential} one-at-a-time requests for round trips, /api/notify at ${opts.notifyRate} req/s, ${opts.letters} letters, ${int(opts.memoryCount)} records per kind for memory, ${int(opts.growthTokens)} tokens for growth${opts.autoPipelining ? ', A\'s ioredis client with enableAutoPipelining' : ''}${opts.dReadsAsA ? ', D sending A\'s token read (its script, on one of A\'s records) instead of a PING on operation 1 (--d-reads-as-a)' : ''}; ops: ${[...opts.ops].join(', ')}`);
  lines.push('- One host on all four: oidc-provider 9 with the same client (client_secret_basic), signing key (RS256), TTLs, scopes, opaque tokens, refresh tokens issued and rotated, accounts in memory (the same findAccount); three ways to store its records. A: the plugin on Redis (`plugin.configure()`, `plugin.attach()`, as a host adds it; until 2026-11-23 A was the reference provider, whose own account read from Redis and metrics counted against the plugin); B: an unbounded in-memory adapter (bench/memory-adapter.ts; not the built-in LRU of 1,000); C: the same Redis through the naive adapter shaped like oidc-provider\'s documentation example (bench/naive-redis-adapter.ts: one key per record with a TTL, MULTI for writes, a list per grant, consume as HSET, no tombstones, no atomic consume); D: exactly B plus, on the route of the operation being timed, the Redis round trips A makes for it as sequential PINGs on an ioredis client of its own (bench/ops/oauth.ts D_ROUND_TRIPS; operations 1-4 only). Each in its own process; autocannon in another. Tokens are session-bound (`openid email`, no offline_access), one sign-in (session + grant) per token, minted through the models; token answers carry an RS256 ID token on all.');
  lines.push('');

  if (results.length) {
    lines.push('## Throughput and latency', '');
    const rows: (string | number)[][] = [];
    const ratioText = (a: Aggregate, other: Aggregate | undefined) => {
      if (!other) return '';
      const { median: m, rounds } = perRoundRatio(a, other);
      return `${num(m)} (${rounds.map((x) => num(x)).join(' / ')})`;
    };
    for (const r of results) {
      const floor = floorOf(r);
      for (const name of ['A', 'B', 'C', 'D'] as const) {
        const a = r.byServer[name];
        if (!a) continue;
        const introspectA = results.find((x) => x.op.name === 'introspect')?.byServer.A;
        let ratio = '';
        let ratioC = '';
        let ratioD = '';
        let bound = '';
        if (name === 'A') {
          ratio = ratioText(a, r.byServer.B);
          ratioC = ratioText(a, r.byServer.C);
          ratioD = ratioText(a, r.byServer.D);
          if (floor && r.byServer.B) bound = `${ratioText(r.byServer.D!, r.byServer.B)}, N = ${floor.n}${floorMismatch(floor)}`;
        }
        if (r.op.name === 'notify' && introspectA) ratio = `${num(a.rps / introspectA.rps)} × (1) A`;
        const seq = r.sequential[name];
        rows.push([
          name === 'A' ? r.op.title : '',
          name,
          int(a.rps),
          a.perRound.map(int).join(' / '),
          ms(a.latency.p50), ms(a.latency.p99), ms(a.latency.max),
          `${a.non2xx} / ${a.errors} / ${a.wrong}`,
          ratio,
          ratioC,
          ratioD,
          bound,
          seq ? ms(seq.latency.p50) : '',
          seq?.wireCommands !== undefined ? num(seq.wireCommands, 1) : '',
          seq?.wireRoundTrips !== undefined ? num(seq.wireRoundTrips, 1) : '',
          seq?.serverCalls !== undefined ? num(seq.serverCalls, 1) : '',
          seq?.redisExecMicros !== undefined ? num(seq.redisExecMicros, 1) : '',
          int(a.cpu.server), name !== 'B' ? int(a.cpu.redis) : '—', int(a.cpu.client), num(a.steal, 0),
        ]);
      }
    }
    if (notifyAtRate) {
      const n = notifyAtRate;
      const sent = lettersDuringRate ? `; ${int(lettersDuringRate.perSecond)} letters/s sent meanwhile` : '';
      rows.push([`5b. /api/notify at ${int(opts.notifyRate)} req/s (open loop), letter worker sending (${opts.workerInProcess ? 'in A\'s process' : `its own process, nice ${opts.workerNice}`})${sent}`, 'A', int(n.rps), n.perRound.map(int).join(' / '), ms(n.latency.p50), ms(n.latency.p99), ms(n.latency.max), `${n.non2xx} / ${n.errors} / ${n.wrong}`, '', '', '', '', '', '', '', '', '', int(n.cpu.server), int(n.cpu.redis), int(n.cpu.client), num(n.steal, 0)]);
    }
    if (notifyAtRateAlone) {
      const n = notifyAtRateAlone;
      rows.push([`5b′. the same rate without a letter worker (one run: the server's own tail at that rate)`, 'A', int(n.rps), n.perRound.map(int).join(' / '), ms(n.latency.p50), ms(n.latency.p99), ms(n.latency.max), `${n.non2xx} / ${n.errors} / ${n.wrong}`, '', '', '', '', '', '', '', '', '', int(n.cpu.server), int(n.cpu.redis), int(n.cpu.client), num(n.steal, 0)]);
    }
    lines.push(table(['Operation', '', 'req/s', 'per round', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx / conn. errors / wrong answers', 'A/B (per round)', 'A/C (per round)', 'A/D (per round)', 'D/B (per round): the bound of N round trips', 'one at a time p50 ms', 'Redis cmds sent/req', 'round trips/req', 'Redis calls executed/req', 'Redis execution µs/req', 'CPU µs/req server', 'Redis', 'autocannon', 'stolen %'], rows));
    lines.push('', `A/B, A/C and A/D: A's rate over B's (the bound: no I/O), C's (the peer: the naive Redis adapter) and D's (B plus A's N round trips as PINGs: the floor of those round trips, see under the Summary), the median of the rounds and each round's (the servers ran in turns, so a round's runs saw the same machine); D/B: D's rate over B's, what N round trips alone cost. "Redis calls executed/req": INFO commandstats over the one-at-a-time requests, every command a script runs counted (server-wide: anything else on this Redis meanwhile too); "Redis cmds sent/req" is what the server process sent; "Redis execution µs/req" is Redis' own time running them (commandstats \`usec\` of the commands sent, a script's including what it runs; no I/O). req/s counts right answers only (introspection checks \`active\`, token answers carry access, refresh and ID tokens, notify says \`email: true\`); latencies are of 2xx answers under ${opts.connections} connections. "one at a time": ${opts.sequential} requests in sequence; Redis commands and round trips per request are counted on A's Redis connection (BullMQ's letter queue included) during those, and on C's and D's. CPU µs/req: CPU time of the server process, of Redis (INFO used_cpu, server-wide) and of the autocannon process during the timed runs, divided by the requests. "stolen %": share of the machine's CPU time the hypervisor gave to other guests during those runs (/proc/stat); where it is high, rates and tails of that row are the host's, not the code's.`);
    lines.push('', `At a fixed rate (5b) the load is open loop (bench/ops/open-loop.ts): request i is due at ${num(1000 / opts.notifyRate, 2)} ms × i from the start, sent whether or not earlier ones were answered, on a keep-alive pool that opens connections as needed (many relying sites); its latency counts from when it was due, so time spent waiting for a connection or behind a slow answer is in the tail. "autocannon" CPU is then that driver's. 5b′ runs first, before the worker process starts, after one run at the rate that is not counted; the worker then warms up for one run at the rate, not counted either, as every server does before its timed runs.`);
    lines.push('');
  }

  // The README's Performance table, ready to paste: A against the bound (B), the peer (C) and the floor of its round trips (D).
  const summary = results.filter((r) => r.byServer.A && r.byServer.B).map((r) => {
    const [a, b, c, d] = [r.byServer.A!, r.byServer.B!, r.byServer.C, r.byServer.D];
    const [sa, sc, sd] = [r.sequential.A, r.sequential.C, r.sequential.D];
    const floor = floorOf(r);
    const wire = (name: string, x: Sequential | undefined) => (x?.wireCommands !== undefined ? `, ${name} ${num(x.wireCommands, 0)} / ${num(x.wireRoundTrips!, 0)}` : '');
    const others = `${wire('C', sc)}${wire('D', sd)}`.slice(2);
    return [
      r.op.title, int(a.rps), int(b.rps), c ? int(c.rps) : '—', d ? int(d.rps) : '—',
      num(perRoundRatio(a, b).median), c ? num(perRoundRatio(a, c).median) : '—',
      floor?.ad ? num(floor.ad.median) : '—', floor?.db ? `${num(floor.db.median)} (N = ${floor.n})${floorMismatch(floor)}` : '—',
      `${ms(a.latency.p50)} / ${ms(a.latency.p99)}`,
      sa?.wireCommands !== undefined ? `${num(sa.wireCommands, 0)} / ${num(sa.wireRoundTrips!, 0)}${others ? ` (${others})` : ''}` : '',
      sa?.serverCalls !== undefined ? `${num(sa.serverCalls, 0)}${sc?.serverCalls !== undefined ? ` (C ${num(sc.serverCalls, 0)})` : ''}` : '',
      [a, b, c, d].map((x) => (x ? int(x.cpu.server) : '—')).join(' / '),
      [a, c, d].map((x) => (x ? int(x.cpu.redis) : '—')).join(' / '),
    ];
  });
  if (summary.length) {
    lines.push('## Summary (the README\'s Performance table)', '');
    lines.push(table(['Operation', 'A req/s', 'B req/s', 'C req/s', 'D req/s', 'A/B', 'A/C', 'A/D', 'D/B: the bound of N round trips', 'A p50 / p99 ms', 'Redis commands / round trips (A; C, D)', 'Redis calls executed (A)', 'CPU µs/request server A / B / C / D', 'Redis CPU µs/request A / C / D'], summary), '');
    if (results.some((r) => r.byServer.D)) lines.push(FLOOR_PARAGRAPH, '');
    const race = raceRows.map(({ server, result: x }) => `${server} ${x.raceFree}/${x.trials} race-free (${x.severalLive} with several live families)`).join(', ');
    if (race) lines.push(`Refresh race (${raceRows[0]!.result.concurrency} concurrent refreshes with one token): ${race}.`, '');
  }
  if (notifyAtRate) lines.push(`/api/notify at ${int(opts.notifyRate)} requests/s with the letter worker sending: ${int(notifyAtRate.rps)} req/s, p50 ${ms(notifyAtRate.latency.p50)} ms, p99 ${ms(notifyAtRate.latency.p99)} ms, ${failures(notifyAtRate)} errors, ${int(lettersDuringRate?.perSecond ?? 0)} letters/s sent meanwhile.${coresDuringRate(notifyAtRate, lettersDuringRate, notifyAtRateAlone)}`, '');

  const targets: Target[] = [];
  const find = (n: HttpOpName) => results.find((r) => r.op.name === n);
  if (find('introspect')) targets.push(targetIntrospect(find('introspect')!));
  if (find('refresh')) targets.push(targetRefresh(find('refresh')!));
  if (find('notify')) targets.push(targetNotify(find('notify')!, notifyState()));
  targets.push(...raceTargets(raceRows));
  targets.push(...growthTargets(growthRows, grantRows, inboxRows));
  for (const r of results) {
    const floor = floorOf(r);
    if (floor?.mismatch) notes.push(`${r.op.title}: A made ${num(floor.aTrips!, 1)} Redis round trips per request, D was given ${floor.n} (bench/ops/oauth.ts D_ROUND_TRIPS): D/B and A/D of this operation are not the floor of A's design until the table says what A does.`);
    for (const [name, a] of Object.entries(r.byServer)) {
      if (failures(a)) notes.push(`${r.op.title} on ${name}: status codes ${JSON.stringify(a.statusCodes)}, ${a.errors} connection errors, ${a.wrong} wrong answers.`);
    }
  }
  const allZero = results.every((r) => Object.values(r.byServer).every((a) => failures(a) === 0)) && (!notifyAtRate || failures(notifyAtRate) === 0);
  if (results.length) targets.push({ what: 'Every operation without errors', value: allZero ? '0 non-2xx, 0 connection errors, 0 wrong answers' : 'see the table', pass: allZero });
  if (targets.length) {
    lines.push('## Targets (issues 6 and 17)', '', table(['Target', 'Measured', ''], targets.map((t) => [t.what, t.value, check(t.pass)])), '');
  }
  // Where a rate target is missed: what bounds each server, from the CPU it used per request.
  for (const r of results.filter((x) => x.byServer.A && x.byServer.B)) {
    const missed = (r.op.name === 'introspect' && !targetIntrospect(r).pass) || (r.op.name === 'refresh' && !targetRefresh(r).pass);
    if (!missed) continue;
    const [a, b] = [r.byServer.A!, r.byServer.B!];
    const cores = (x: Aggregate) => (x.cpu.server * x.rps) / 1e6;
    const perTrip = clientCost.find((c) => c.mode.startsWith('one') && !c.autoPipelining)?.cpuMicros;
    lines.push(`**${r.op.title}, why A is behind.** The server processes kept A ${num(cores(a))} and B ${num(cores(b))} cores busy (of ${availableParallelism()}; a Node server runs on one thread, and autocannon and Redis share the cores), so their rates follow their CPU per request: A ${int(a.cpu.server)} µs, B ${int(b.cpu.server)} µs (${num(b.cpu.server / a.cpu.server)} from CPU alone), A − B = ${int(a.cpu.server - b.cpu.server)} µs per request.${perTrip ? ` A sends ${num(r.sequential.A?.wireCommands ?? NaN, 0)} Redis commands in ${num(r.sequential.A?.wireRoundTrips ?? NaN, 0)} round trips per request; one command alone costs the sending process about ${num(perTrip, 0)} µs of CPU here (table "What one Redis command costs").` : ''}${floorSplit(r, floorOf(r))} The profiles below say where the rest goes.`, '');
  }

  if (raceRows.length) {
    lines.push('## Refresh race', '');
    lines.push(table(['Server', 'Trials', 'Concurrent refreshes', 'one winner, chain dead', 'one answer, given again', 'several live families', 'other', 'refresh tokens handed out per trial', 'race-free'], raceRows.map(({ server, result: x }) => [server, x.trials, x.concurrency, x.oneWinnerChainDead, x.oneAnswerAgain, x.severalLive, x.other, num(x.familiesMean, 1), `${x.raceFree}/${x.trials}`])));
    lines.push('', 'Each trial: one fresh refresh token, 20 refreshes with it at once, then one refresh with each refresh token handed out, to see which still work. "one winner, chain dead": one rotation went through, the other 19 were refused as reuse and the grant was revoked, the new token with it. "one answer, given again": all 20 got the same answer (A\'s reuse leeway: README "Refresh that survives a lost answer"), one live token family. "several live families": more than one rotation went through and their tokens still work: the race was lost (KNOWN-TRAPS item 2).', '');
  }

  const seqRows: (string | number)[][] = [];
  for (const r of results) {
    for (const name of ['A', 'C', 'D'] as const) {
      const s = r.sequential[name];
      if (s?.wireCommands !== undefined) seqRows.push([`${r.op.title} (${name})`, s.storeCommands !== undefined ? num(s.storeCommands, 2) : '—', s.storeRoundTrips !== undefined ? num(s.storeRoundTrips, 2) : '—', num(s.wireCommands, 2), num(s.wireRoundTrips!, 2), num(s.serverCalls!, 1), s.wireByName!, s.serverByName!, s.failures]);
    }
  }
  for (const { label, seq: s } of extraSequential) {
    seqRows.push([label, num(s.storeCommands!, 2), num(s.storeRoundTrips!, 2), num(s.wireCommands!, 2), num(s.wireRoundTrips!, 2), num(s.serverCalls!, 1), s.wireByName!, s.serverByName!, s.failures]);
  }
  if (seqRows.length) {
    lines.push('## Redis per request (A, C and D, one request at a time)', '');
    lines.push(table(['Operation', 'store cmds', 'store round trips', 'connection cmds', 'connection round trips', 'server calls (INFO)', 'sent, per request', 'executed (INFO commandstats), per request', 'failed'], seqRows));
    lines.push('', '"store": the plugin store\'s `commandsSent` / `roundTrips`; "connection": every command on A\'s ioredis connection (adds BullMQ\'s queue); "server calls": INFO commandstats deltas, which count each command a Lua script runs and, being server-wide, anything other clients of this Redis did meanwhile.', '');
  }

  if (clientCost.length) {
    lines.push('## What one Redis command costs the server process', '');
    lines.push(table(['HMGET of a token-sized record, 10 lanes', 'enableAutoPipelining', 'CPU µs per command', 'commands/s'], clientCost.map((c) => [c.mode, c.autoPipelining ? 'on' : 'off', num(c.cpuMicros, 1), int(c.commandsPerSecond)])));
    lines.push('', 'ioredis in the orchestrator process (command object, encoding, socket write, reply parsing, promises), CPU time divided by commands. A pays this for each command of a request on top of what B does; compare with the CPU µs/req columns above.', '');
  }

  if (letterResult) {
    lines.push('## 6. Letter worker', '');
    lines.push(table(['Letters', 'Seconds', 'Letters/s', 'Received by the sink', 'Left in the queue'], [[int(letterResult.letters), num(letterResult.seconds), int(letterResult.perSecond), int(letterResult.received), letterResult.pendingAfter]]));
    lines.push('', `Queued through POST /api/notify with the worker off, then the worker started (concurrency ${opts.letterConcurrency}, the plugin's \`letters.concurrency\`) with a pooled nodemailer SMTP transport (5 connections) into a local smtp-server that counts letters; time from the start of the worker to the last letter accepted.`, '');
  }

  if (text.length) {
    lines.push('## 7. Text rules (`neutralizeLinks`)', '');
    lines.push(table(['Input', 'Where', 'calls/s', 'µs/call'], text.map((t) => [t.name, t.where, int(t.callsPerSecond), num(t.usPerCall, 1)])));
    lines.push('', 'In the orchestrator process while the servers idle; the 2,000 characters mix domains, IPv4 addresses and ports, http/https links, e-mail addresses, file names on real zones, invisible and bidi characters next to dots, IDNs and long dotted runs (bench/ops/text.ts).', '');
  }

  if (memoryRows.length) {
    lines.push('## Redis memory per record', '');
    lines.push(table(['Record', 'used_memory delta / record', 'MEMORY USAGE of the key (mean of 50)', 'Encoding: record / its index', 'Records'], memoryRows.map((m) => [m.what, bytes(m.perRecord), m.memoryUsage !== undefined ? bytes(m.memoryUsage) : '—', m.encoding ?? '—', int(m.count)])));
    lines.push('', 'Tokens: ten to a grant, grants existing before; the delta includes the grant index entry (MEMORY USAGE is the record key alone). Redis keeps a hash compact (listpack) only while every value is at most 64 bytes (\`hash-max-listpack-value\`) and a sorted set only while every member is (\`zset-max-listpack-value\`): the \`p\` of a record (the payload JSON) and a member of a grant index (a full key name) are longer. Grants: one more for accounts that already have one (the account\'s grant index exists). Inbox: POST /api/notify (category product: in the account only, no letter) for people of their own; the entries hash is a real hash table either way (entries are longer than 64 bytes), the two sorted sets are compact up to 128 entries.', '');
  }

  if (growthRows.length || grantRows.length || inboxRows.length) {
    lines.push('## Growth', '');
    if (growthRows.length) {
      lines.push(table(['Level', 'Live tokens', 'Operation', 'Requests', 'req/s', 'p50 ms', 'p99 ms', 'Redis cmds/req', '"last used" writes/req', 'Redis execution µs/req', 'CPU µs/req server', 'Redis', 'stolen %', 'failures'], growthRows.map((g) => [g.level, int(g.live), g.title, int(g.requests), int(g.rps), ms(g.p50), ms(g.p99), num(g.commands), num(g.lastUsed), num(g.exec, 1), int(g.cpu.server), int(g.cpu.redis), num(g.steal, 0), g.failures])));
      lines.push('', `Small level: the tokens, sessions and grants the runs above left are deleted; 200 access tokens are minted for introspection (presented again and again, ${Math.min(opts.duration, 5)} s); refresh and revocation run ${growthReps()} batches of ${GROWTH_BATCH} fresh tokens each (after a refresh batch the tokens it consumed and created are deleted), and ${int(SMALL_FILLER)} access-token records fill the level up to 1,000–2,000 live tokens. Large level: the same with ${int(opts.growthTokens)} access-token records in the adapter's layout (\`adapterKeys\` record hash \`{ p }\` with PEXPIRE), written in ${num(fillSeconds, 1)} s with pipelines of 10,000 keys and removed in ${num(unfillSeconds, 1)} s (SCAN + DEL). The small level runs before and after the large one, so drift shows; each level starts after a 3 s pause and 2,000 unmeasured introspections (right after a bulk write Redis is still rehashing its key table), and a run during which the hypervisor took more than ${STEAL_LIMIT} % of the CPU is run again, twice at most (${growthRetries} times in this run). "Live tokens": token records at the start of each operation. Flat means: the same commands per request at every level (nothing the plugin does walks the tokens; the \"last used\" writes are left out of \"Redis cmds/req\" and shown beside it: one per site and person a minute, their number follows whose tokens a batch holds, not the level; a refresh's goes inside the token endpoint's one script, none of its own), and req/s and p50 of the large level within 20 % and 25 % of the small ones (compare the two small levels for the drift of the machine). \"Redis execution µs/req\" is the time Redis spends running a request's commands by its own clock (INFO commandstats \`usec\`, without I/O and background work such as rehashing and expiry): the same commands cost it more with ${int(opts.growthTokens)} records, far beyond the CPU's caches (a key lookup then misses them; see the next table), a constant factor and not a walk; the server process, not Redis, bounds the rate.`, '');
    }
    if (lookupRows.length) {
      lines.push(table(['Level', 'Filler records', 'Redis µs per HGET of a random one'], lookupRows.map((r) => [r.level, int(r.records), num(r.micros, 2)])));
      lines.push('', 'Redis alone, no plugin: 40,000 HGETs of random filler records, pipelined, timed by Redis\' own clock (INFO commandstats). The same command on the same kind of record costs Redis more when the records it picks from no longer fit the CPU\'s caches: the growth of "Redis execution µs/req" above is this, not work that grows with the tokens.', '');
    }
    if (grantRows.length) {
      lines.push(table(['Grant with k tokens', 'Samples', 'revokeGrant ms (median)', 'µs per token', 'Redis cmds', 'round trips', 'tokens left'], grantRows.map((g) => [int(g.k), g.samples, ms(g.ms), num((g.ms * 1000) / g.k, 1), int(g.commands), g.roundTrips, g.left])));
      lines.push('');
    }
    if (inboxRows.length) {
      lines.push(`Inbox: one account with 10 messages, one with 1,000 (the default \`notify.inboxSize\`), written through POST /api/notify; \`plugin.inbox.page(accountId, undefined, ${INBOX_PAGE})\` timed in A's process, the two inboxes taking turns call by call (pages of ${INBOX_PAGE} so both are full; the first 20 calls of each are not counted).`, '');
      lines.push(table(['Inbox of', 'Page calls', 'ms per page (median)', 'p99 ms', 'Redis cmds/page', 'round trips/page', 'items'], inboxRows.map((i) => [`${int(i.messages)} messages`, i.calls, num(i.ms, 3), num(i.p99, 3), num(i.commands), num(i.roundTrips), i.items])));
      lines.push('');
    }
  }

  if (profiles.length) {
    lines.push('## CPU profiles', '');
    lines.push('V8 CPU profiles (the profiler and file format of `node --cpu-prof`), taken with node:inspector in the server process for one run of the operation only. Times are per request, so A and B compare although their rates differ; "idle" is time the process waited (for Redis, for requests).', '');
    for (const op of [...new Set(profiles.map((p) => p.op))]) {
      const pair = profiles.filter((p) => p.op === op);
      lines.push(`### ${op}`, '');
      lines.push(pair.map((p) => `${p.server}: \`${p.file}\`, ${int(p.rps)} req/s while profiling, ${num(p.summary.totalMs / 1000, 1)} s`).join('; '), '');
      const areas = [...new Set(pair.flatMap((p) => p.summary.byArea.map((a) => a.area)))];
      const perReq = (p: typeof pair[number], area: string) => ((p.summary.byArea.find((a) => a.area === area)?.ms ?? 0) * 1000) / p.requests;
      const rows = areas.map((area) => [area, ...pair.map((p) => int(perReq(p, area)))]);
      rows.sort((x, y) => Number(String(y[1]).replace(/,/g, '')) - Number(String(x[1]).replace(/,/g, '')));
      const busy = (p: typeof pair[number]) => (p.summary.byArea.filter((a) => a.area !== 'idle').reduce((t, a) => t + a.ms, 0) * 1000) / p.requests;
      rows.push(['**busy (all but idle)**', ...pair.map((p) => `**${int(busy(p))}**`)]);
      lines.push(table(['Area', ...pair.map((p) => `${p.server} µs/request`)], rows), '');
      const [pa, pb] = [pair.find((x) => x.server === 'A'), pair.find((x) => x.server === 'B')];
      if (pa && pb) {
        lines.push(table(['Where A spends more than B (self time)', 'Where', 'A µs/request', 'B µs/request', 'A − B'], selfDiff(pa.summary, pa.requests, pb.summary, pb.requests).map((d) => [d.name, d.where, num(d.a, 1), num(d.b, 1), num(d.a - d.b, 1)])), '');
      }
      if (pa) {
        lines.push(table(['A: most self time', 'Where', 'µs/request', '%'], pa.summary.topSelf.slice(0, 10).map((f) => [f.name, f.where, int((f.ms * 1000) / pa.requests), num(f.pct, 1)])), '');
        lines.push(table(['A: plugin functions, including what they call', 'Where', 'µs/request', '%'], pa.summary.topPluginInclusive.slice(0, 8).map((f) => [f.name, f.where, int((f.ms * 1000) / pa.requests), num(f.pct, 1)])), '');
        lines.push('(Koa middlewares such as `missing-client-auth` include everything that runs synchronously after them up to their first await.)', '');
      }
    }
  }

  if (stealRetries.length) {
    notes.push(`Rounds run again because the hypervisor took more than ${STEAL_LIMIT} % of the CPU during them (at most ${MAX_RETRIES} per operation; the tables show the kept rounds): ${stealRetries.join('; ')}.`);
  }
  if (notes.length) lines.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  lines.push('Reproduce: `npm run bench` (Redis 7 at REDIS_URL or 127.0.0.1:6379); `npm run bench -- --quick` for a smoke run; `--help` for the options.', '');
  return lines.join('\n');
}
