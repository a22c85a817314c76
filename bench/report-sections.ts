/**
 * The sections of the benchmark's report after its targets (bench/report-md.ts):
 * the refresh race, Redis per request, what one command costs, the letter
 * worker, the text rules, memory per record, growth and the CPU profiles.
 */
import { bytes, int, ms, num, table } from './report.ts';
import { selfDiff } from './profile.ts';
import type { ReportInput } from './results.ts';

export function detailSections(input: ReportInput): string[] {
  const {
    opts, text, profiles, raceRows, letterResult, clientCost, extraSequential, results, memoryRows, growthRows, lookupRows,
    grantRows, inboxRows, fillSeconds, unfillSeconds, growthRetries,
  } = input;
  const { STEAL_LIMIT, GROWTH_BATCH, SMALL_FILLER, INBOX_PAGE } = input.constants;
  const growthReps = () => input.constants.growthReps;
  const lines: string[] = [];
  if (raceRows.length) {
    lines.push('## Refresh race', '');
    lines.push(table(['Server', 'Trials', 'Concurrent refreshes', 'one winner, chain dead', 'one answer, given again', 'several live families', 'other', 'refresh tokens handed out per trial', 'race-free'], raceRows.map(({ server, result: x }) => [server, x.trials, x.concurrency, x.oneWinnerChainDead, x.oneAnswerAgain, x.severalLive, x.other, num(x.familiesMean, 1), `${x.raceFree}/${x.trials}`])));
    lines.push('', 'Each trial: one fresh refresh token, 20 refreshes with it at once, then one refresh with each refresh token handed out, to see which still work. "one winner, chain dead": one rotation went through, the other 19 were refused as reuse and the grant was revoked, the new token with it. "one answer, given again": all 20 got the same answer (A\'s reuse leeway: docs/reuse-leeway.md), one live token family. "several live families": more than one rotation went through and their tokens still work: the race was lost (KNOWN-TRAPS item 2).', '');
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

  if (input.adoption) {
    const { rows, ratio, rounds } = input.adoption;
    lines.push('## Taking over from a previous adapter (introspection)', '');
    lines.push(table(['Token', 'store cmds', 'store round trips', 'previous-store lookups', 'p50 ms (one at a time)', 'req/s', 'wrong'], rows.map((r) => [r.case, num(r.storeCommands, 2), num(r.storeRoundTrips, 2), num(r.previousLookups, 2), ms(r.latency.p50), int(r.rps), r.failures])));
    lines.push('', `The plugin with \`previousAdapter\` on oidc-provider's example Redis store (bench/adoption-process.ts): tokens it issued (native) and tokens the example adapter held, moved in at their first use (moved); random values introspected with the window open and after an import closed it. \`token_type_hint=access_token\`: an unknown value is asked for as an access token, then as a refresh token. Moved/native: **${num(ratio, 3)}** (median of ${rounds} rounds; target ≥ 0.95).`, '');
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
      lines.push(table(['Level', 'Live tokens', 'Operation', 'Requests', 'req/s', 'p50 ms', 'p99 ms', 'Redis cmds/req, token path', '"last used" writes of their own/req', 'Redis execution µs/req', 'CPU µs/req server', 'Redis', 'stolen %', 'failures'], growthRows.map((g) => [g.level, int(g.live), g.title, int(g.requests), int(g.rps), ms(g.p50), ms(g.p99), num(g.commands), num(g.lastUsed), num(g.exec, 1), int(g.cpu.server), int(g.cpu.redis), num(g.steal, 0), g.failures])));
      lines.push('', `Small level: the tokens, sessions and grants the runs above left are deleted; 200 access tokens are minted for introspection (presented again and again, ${Math.min(opts.duration, 5)} s); refresh and revocation run ${growthReps()} batches of ${GROWTH_BATCH} fresh tokens each (after a refresh batch the tokens it consumed and created are deleted), and ${int(SMALL_FILLER)} access-token records fill the level up to 1,000–2,000 live tokens. Large level: the same with ${int(opts.growthTokens)} access-token records in the adapter's layout (\`adapterKeys\` record hash \`{ p }\` with PEXPIRE), written in ${num(fillSeconds, 1)} s with pipelines of 10,000 keys and removed in ${num(unfillSeconds, 1)} s (SCAN + DEL). The small level runs before and after the large one, so drift shows; each level starts after a 3 s pause and 2,000 unmeasured introspections (right after a bulk write Redis is still rehashing its key table), and a run during which the hypervisor took more than ${STEAL_LIMIT} % of the CPU is run again, twice at most (${growthRetries} times in this run). "Live tokens": token records at the start of each operation. Flat means: the token path's commands per request are the same at every level (nothing the plugin does walks the tokens). The site's \"last used\" writes sent as commands of their own (introspection's: \`site_used\`, as EVALSHA or, the first time Redis meets the script, EVAL) are left out of them and shown beside: one per site and person a minute, their number follows whose tokens a batch holds and when the minute turns, not the level; a refresh's goes inside the token endpoint's one script, none of its own. A's letter worker is stopped first, so its queue's cleanup sends nothing on A's connection meanwhile, and req/s and p50 of the large level within 20 % and 25 % of the small ones (compare the two small levels for the drift of the machine). \"Redis execution µs/req\" is the time Redis spends running a request's commands by its own clock (INFO commandstats \`usec\`, without I/O and background work such as rehashing and expiry): the same commands cost it more with ${int(opts.growthTokens)} records, far beyond the CPU's caches (a key lookup then misses them; see the next table), a constant factor and not a walk; the server process, not Redis, bounds the rate.`, '');
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
    lines.push('V8 CPU profiles (the profiler and file format of `node --cpu-prof`), taken with node:inspector in the server process for one run of the operation only, of A and of the server its missed target compares it with (D, else B; every server with --profile). The files are written beside this report and stay on the machine that ran it (git ignores them). Times are per request, so the servers compare although their rates differ; "idle" is time the process waited (for Redis, for requests).', '');
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
      // A against the floor of its round trips where D was profiled, else against the bound.
      const [pa, po] = [pair.find((x) => x.server === 'A'), pair.find((x) => x.server === 'D') ?? pair.find((x) => x.server === 'B')];
      if (pa && po) {
        const o = po.server;
        lines.push(table([`Where A spends more than ${o} (self time)`, 'Where', 'A µs/request', `${o} µs/request`, `A − ${o}`], selfDiff(pa.summary, pa.requests, po.summary, po.requests).map((d) => [d.name, d.where, num(d.a, 1), num(d.b, 1), num(d.a - d.b, 1)])), '');
      }
      if (pa) {
        lines.push(table(['A: most self time', 'Where', 'µs/request', '%'], pa.summary.topSelf.slice(0, 10).map((f) => [f.name, f.where, int((f.ms * 1000) / pa.requests), num(f.pct, 1)])), '');
        lines.push(table(['A: plugin functions, including what they call', 'Where', 'µs/request', '%'], pa.summary.topPluginInclusive.slice(0, 8).map((f) => [f.name, f.where, int((f.ms * 1000) / pa.requests), num(f.pct, 1)])), '');
        lines.push('(Koa middlewares such as `missing-client-auth` include everything that runs synchronously after them up to their first await.)', '');
      }
    }
  }
  return lines;
}
