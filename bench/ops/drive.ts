/**
 * One load run with autocannon: fixed connections, for a duration or a number
 * of requests (at a fixed overall rate: open loop instead, ./open-loop.ts).
 * Every request body comes from `body()`, so each can carry a fresh token.
 * Latencies are recorded here from autocannon's per-response event
 * (fractions of a millisecond; its own histogram keeps whole milliseconds),
 * 2xx answers only.
 */
import autocannon from 'autocannon';

import { driveAtRate } from './open-loop.ts';
import { runResult, type Load, type RequestSpec, type RunResult } from './run-result.ts';

export async function drive(url: string, spec: RequestSpec, load: Load): Promise<RunResult> {
  if (load.overallRate) return driveAtRate(url, spec, { ...load, overallRate: load.overallRate });
  let wrong = 0;
  let ranOut = false;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let lastBody = '';
  const cap = load.amount ?? (load.supply !== undefined ? Math.max(load.supply, load.connections) : undefined);

  const instance = autocannon({
    url,
    connections: load.connections,
    ...(load.amount !== undefined ? { amount: load.amount } : { duration: load.duration ?? 10 }),
    ...(cap !== undefined && load.amount === undefined ? { maxOverallRequests: cap } : {}),
    timeout: 10,
    requests: [{
      method: 'POST',
      path: spec.path,
      headers: spec.headers,
      setupRequest(request) {
        const body = spec.body();
        if (body === undefined) {
          ranOut = true;
          return { ...request, body: lastBody };
        }
        lastBody = body;
        return { ...request, body };
      },
      onResponse(status, body) {
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status < 200 || status >= 300) return;
        if (spec.expect && !spec.expect(body)) wrong += 1;
        else spec.onOk?.(body);
      },
    }],
  });
  // Timed from the first request to the last answer: autocannon itself stops
  // only at its next one-second tick once every connection is done.
  const started = process.hrtime.bigint();
  let last = started;
  let answered = 0;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    last = process.hrtime.bigint();
    answered += 1;
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await instance;
  const seconds = Number(last - started) / 1e9;
  const ok = result['2xx'] - wrong;
  // The supply cap ended the run before its duration.
  if (load.amount === undefined && cap !== undefined && answered >= cap && seconds < (load.duration ?? 10) * 0.95) ranOut = true;
  return runResult({ ok, non2xx: result.non2xx, errors: result.errors, wrong, statusCodes, seconds, ranOut }, latencies);
}

/** A supply of bodies from a list, each used once. */
export function once(values: string[], toBody: (value: string) => string): { body: () => string | undefined; supply: number } {
  let i = 0;
  return { body: () => (i < values.length ? toBody(values[i++]!) : undefined), supply: values.length };
}

/** Bodies from a list, round robin (tokens that may be presented again, e.g. for introspection). */
export function roundRobin(values: string[], toBody: (value: string) => string): () => string {
  let i = 0;
  return () => toBody(values[i++ % values.length]!);
}
