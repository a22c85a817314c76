/**
 * Reads a V8 CPU profile (the format `node --cpu-prof` writes; here taken with
 * node:inspector around one operation only) and says where the time went:
 * by area (the plugin's files, oidc-provider, ioredis, ...), the functions
 * with the most self time, and the plugin's functions with the most time
 * including what they call.
 */
import type { Profiler, Runtime } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';

export interface ProfileLine {
  name: string;
  where: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  totalMs: number;
  samples: number;
  byArea: { area: string; ms: number; pct: number }[];
  topSelf: ProfileLine[];
  /** Functions in the plugin's own files (src/, adapters/, examples/, views/): self time, and time including what they call. */
  topPluginSelf: ProfileLine[];
  topPluginInclusive: ProfileLine[];
  /** Self time of the 300 busiest functions, to compare two profiles. */
  selfAll: ProfileLine[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function where(frame: Runtime.CallFrame): string {
  if (!frame.url) return '';
  const path = frame.url.startsWith('file://') ? relative(ROOT, fileURLToPath(frame.url)) : frame.url;
  return `${path}:${frame.lineNumber + 1}`;
}

export function areaOf(frame: Pick<Runtime.CallFrame, 'url' | 'functionName'>): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8/native (program)';
    return 'native';
  }
  if (url.startsWith('node:')) return 'Node core (http, net, crypto, ...)';
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) {
    const pkg = m[1]!;
    if (pkg === 'oidc-provider') return 'oidc-provider';
    if (pkg === 'ioredis' || pkg.startsWith('@ioredis') || pkg === 'redis-parser' || pkg === 'denque' || pkg === 'cluster-key-slot') return 'ioredis';
    if (pkg === 'bullmq' || pkg === 'msgpackr') return 'bullmq';
    if (pkg === 'koa' || pkg.startsWith('@koa') || pkg.startsWith('koa-') || pkg === 'path-to-regexp' || pkg === 'raw-body' || pkg === 'cookies' || pkg === 'keygrip') return 'koa (+router, cookies)';
    if (pkg === 'jose') return 'jose';
    if (pkg === 'zod') return 'zod';
    return `other deps (${pkg})`;
  }
  if (url.includes('/bench/')) return 'bench';
  if (/\/(src|adapters|examples|views)\//.test(url)) return 'plugin (src, adapters, examples, views)';
  return 'other';
}

/** Functions whose self time per request differs most between two profiles (a − b), µs. */
export function selfDiff(a: ProfileSummary, aRequests: number, b: ProfileSummary, bRequests: number, top = 12): { name: string; where: string; a: number; b: number }[] {
  const key = (l: ProfileLine) => `${l.name}\u0000${l.where}`;
  const perReq = (lines: ProfileLine[], n: number) => new Map(lines.map((l) => [key(l), (l.ms * 1000) / n]));
  const [ma, mb] = [perReq(a.selfAll, aRequests), perReq(b.selfAll, bRequests)];
  return [...new Set([...ma.keys(), ...mb.keys()])]
    .map((k) => {
      const [name, where] = k.split('\u0000') as [string, string];
      return { name, where, a: ma.get(k) ?? 0, b: mb.get(k) ?? 0 };
    })
    .sort((x, y) => (y.a - y.b) - (x.a - x.b))
    .slice(0, top);
}

export function summarizeProfile(profile: Profiler.Profile, top = 15): ProfileSummary {
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // Time of sample i: the gap to the next sample (the last one gets the mean).
  const mean = samples.length ? totalMs / samples.length : 0;
  const timeOf = (i: number) => (i + 1 < deltas.length ? deltas[i + 1]! / 1000 : mean);

  const key = (f: Runtime.CallFrame) => `${f.functionName || '(anonymous)'}\u0000${where(f)}`;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  for (let i = 0; i < samples.length; i++) {
    const node = nodes.get(samples[i]!);
    if (!node) continue;
    const ms = timeOf(i);
    self.set(key(node.callFrame), (self.get(key(node.callFrame)) ?? 0) + ms);
    areas.set(areaOf(node.callFrame), (areas.get(areaOf(node.callFrame)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = nodes.get(id)!.callFrame;
      if (!areaOf(frame).startsWith('plugin')) continue;
      const k = key(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + ms);
    }
  }
  const line = ([k, ms]: [string, number]): ProfileLine => {
    const [name, at] = k.split('\u0000') as [string, string];
    return { name, where: at, ms, pct: (100 * ms) / totalMs };
  };
  const isIdle = (k: string) => k.startsWith('(idle)');
  return {
    totalMs,
    samples: samples.length,
    byArea: [...areas].sort((a, b) => b[1] - a[1]).map(([area, ms]) => ({ area, ms, pct: (100 * ms) / totalMs })),
    topSelf: [...self].filter(([k]) => !isIdle(k)).sort((a, b) => b[1] - a[1]).slice(0, top).map(line),
    topPluginSelf: [...self].filter(([k]) => /\u0000(src|adapters|examples|views)\//.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top).map(line),
    topPluginInclusive: [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top).map(line),
    selfAll: [...self].filter(([k]) => !isIdle(k)).sort((a, b) => b[1] - a[1]).slice(0, 300).map(line),
  };
}
