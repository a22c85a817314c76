/**
 * The benchmark's report: the markdown `npm run bench` prints and writes to
 * bench/results (bench/results-index.ts names it), from what the run
 * collected. The machine and options, the rates and ratios, the summary and
 * the targets here; the sections after them in bench/report-sections.ts.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

import { cpuTicks } from './machine.ts';
import type { HttpOpName } from './ops/oauth.ts';
import { check, int, ms, num, table } from './report.ts';
import { detailSections } from './report-sections.ts';
import { startedText } from './results-index.ts';
import { failures, perRoundRatio, type Aggregate, type NotifyAtRate, type OpResult, type ReportInput, type Sequential } from './results.ts';
import { comparedWith, floorMismatch, floorOf, growthTargets, missedRateTarget, rateTargets, raceTargets, roundTripCount, targetNotify, type Floor, type Target } from './targets.ts';

/** What D is, under the Summary table (docs/performance.md's). */
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

export function report(input: ReportInput): string {
  const {
    opts, kind, startedAt, redisInfo, loadBefore, ticksBefore, results, notes, raceRows,
    notifyAtRate, notifyAtRateAlone, lettersDuringRate, clientCost, growthRows, grantRows, inboxRows, stealRetries,
  } = input;
  const { STEAL_LIMIT, MAX_RETRIES } = input.constants;
  const notifyState = (): NotifyAtRate => ({ rate: opts.notifyRate, at: notifyAtRate, alone: notifyAtRateAlone, letters: lettersDuringRate });
  const lines: string[] = [];
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const loadAfter = loadavg();
  lines.push(`# oidc-signout-notify benchmark, ${startedText(startedAt)}, ${kind} run`, '');
  lines.push(`- Machine: ${availableParallelism()} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM; Node ${process.version}; Redis ${redisInfo.version} at ${opts.redisUrl.replace(/\/\/[^@]*@/, '//')}`);
  const ticksAfter = cpuTicks();
  const steal = ticksBefore && ticksAfter ? (100 * (ticksAfter.steal - ticksBefore.steal)) / (ticksAfter.total - ticksBefore.total) : NaN;
  lines.push(`- Started ${startedAt.toISOString()}, took ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s. Load average (1 min) ${num(loadBefore[0]!)} before, ${num(loadAfter[0]!)} after; CPU stolen by the hypervisor during the run: ${num(steal, 1)} %. Other work shares this machine and this Redis (${int(redisInfo.keys)} keys of others at start), so rates move by 10-30 % between runs: read the ratios within a round, and the CPU per request, rather than single figures.`);
  lines.push(`- Options: ${opts.quick ? '--quick, ' : ''}duration ${opts.duration} s, ${opts.connections} connections, ${opts.rounds} round(s) per server (${['A', 'B', opts.withC && 'C', opts.withD && 'D (operations 1-4)'].filter(Boolean).join(', ')} taking turns, a different one first each round; ${MAX_RETRIES ? `a round with more than ${STEAL_LIMIT} % of the CPU stolen is run again` : 'no reruns'}) after ${opts.warmup} warm-up requests, ${opts.sequential} one-at-a-time requests for round trips, /api/notify at ${opts.notifyRate} req/s, ${opts.letters} letters, ${int(opts.memoryCount)} records per kind for memory, ${int(opts.growthTokens)} tokens for growth${opts.autoPipelining ? ', A\'s ioredis client with enableAutoPipelining' : ''}${opts.dReadsAsA ? ', D sending A\'s token read (its script, on one of A\'s records) instead of a PING on operation 1 (--d-reads-as-a)' : ''}; ops: ${[...opts.ops].join(', ')}`);
  lines.push('- One host on all four: oidc-provider 9 with the same client (client_secret_basic), signing key (RS256), TTLs, scopes, opaque tokens, refresh tokens issued and rotated, accounts in memory (the same findAccount); three ways to store its records. A: the plugin on Redis (`plugin.configure()`, `plugin.attach()`, as a host adds it; until 2026-11-23 A was the reference provider, whose own account read from Redis and metrics counted against the plugin); B: an unbounded in-memory adapter (bench/memory-adapter.ts; not the built-in LRU of 1,000); C: the same Redis through the naive adapter shaped like oidc-provider\'s documentation example (adapters/previous/example-redis.ts, the package\'s copy that `previousAdapter` reads; until 2026-11-28 bench/naive-redis-adapter.ts: one key per record with a TTL, MULTI for writes, a list per grant, consume as HSET, no tombstones, no atomic consume); D: exactly B plus, on the route of the operation being timed, the Redis round trips A makes for it as sequential PINGs on an ioredis client of its own (bench/ops/oauth.ts D_ROUND_TRIPS; operations 1-4 only). Each in its own process; autocannon in another. Tokens are session-bound (`openid email`, no offline_access), one sign-in (session + grant) per token, minted through the models; token answers carry an RS256 ID token on all.');
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

  // docs/performance.md's table, ready to paste: A against the floor of its round trips (D), the peer (C) and the bound (B).
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
    lines.push('## Summary (docs/performance.md\'s table)', '');
    lines.push(table(['Operation', 'A req/s', 'B req/s', 'C req/s', 'D req/s', 'A/B', 'A/C', 'A/D', 'D/B: the bound of N round trips', 'A p50 / p99 ms', 'Redis commands / round trips (A; C, D)', 'Redis calls executed (A)', 'CPU µs/request server A / B / C / D', 'Redis CPU µs/request A / C / D'], summary), '');
    if (results.some((r) => r.byServer.D)) lines.push(FLOOR_PARAGRAPH, '');
    const race = raceRows.map(({ server, result: x }) => `${server} ${x.raceFree}/${x.trials} race-free (${x.severalLive} with several live families)`).join(', ');
    if (race) lines.push(`Refresh race (${raceRows[0]!.result.concurrency} concurrent refreshes with one token): ${race}.`, '');
  }
  if (notifyAtRate) lines.push(`/api/notify at ${int(opts.notifyRate)} requests/s with the letter worker sending: ${int(notifyAtRate.rps)} req/s, p50 ${ms(notifyAtRate.latency.p50)} ms, p99 ${ms(notifyAtRate.latency.p99)} ms, ${failures(notifyAtRate)} errors, ${int(lettersDuringRate?.perSecond ?? 0)} letters/s sent meanwhile.${coresDuringRate(notifyAtRate, lettersDuringRate, notifyAtRateAlone)}`, '');

  const targets: Target[] = [];
  const find = (n: HttpOpName) => results.find((r) => r.op.name === n);
  targets.push(...rateTargets(results));
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
    lines.push('## Targets (docs/performance.md "Goals")', '', table(['Target', 'Measured', ''], targets.map((t) => [t.what, t.value, check(t.pass)])), '');
  }
  // Where a rate target is missed: what bounds each server, from the CPU it used per request.
  for (const r of results.filter((x) => x.byServer.A && missedRateTarget(x))) {
    const other = comparedWith(r);
    const [a, o] = [r.byServer.A!, r.byServer[other]];
    if (!o) continue;
    const cores = (x: Aggregate) => (x.cpu.server * x.rps) / 1e6;
    const perTrip = clientCost.find((c) => c.mode.startsWith('one') && !c.autoPipelining)?.cpuMicros;
    lines.push(`**${r.op.title}, why A is behind.** The server processes kept A ${num(cores(a))} and ${other} ${num(cores(o))} cores busy (of ${availableParallelism()}; a Node server runs on one thread, and autocannon and Redis share the cores), so their rates follow their CPU per request: A ${int(a.cpu.server)} µs, ${other} ${int(o.cpu.server)} µs (${num(o.cpu.server / a.cpu.server)} from CPU alone), A − ${other} = ${int(a.cpu.server - o.cpu.server)} µs per request.${perTrip ? ` A sends ${num(r.sequential.A?.wireCommands ?? NaN, 0)} Redis commands in ${num(r.sequential.A?.wireRoundTrips ?? NaN, 0)} round trips per request; one command alone costs the sending process about ${num(perTrip, 0)} µs of CPU here (table "What one Redis command costs").` : ''}${floorSplit(r, floorOf(r))} The profiles below say where the rest goes.`, '');
  }

  lines.push(...detailSections(input));

  if (stealRetries.length) {
    notes.push(`Rounds run again because the hypervisor took more than ${STEAL_LIMIT} % of the CPU during them (at most ${MAX_RETRIES} per operation; the tables show the kept rounds): ${stealRetries.join('; ')}.`);
  }
  if (notes.length) lines.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  lines.push('Reproduce: `npm run bench` (Redis 7 at REDIS_URL or 127.0.0.1:6379); `npm run bench -- --quick` for a smoke run; `--help` for the options.', '');
  return lines.join('\n');
}
