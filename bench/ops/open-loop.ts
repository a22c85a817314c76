/**
 * A load at a fixed rate, open loop: request i is due at start + i / rate,
 * evenly spaced (in groups of the requests due within one timer tick, about
 * a millisecond), whether or not earlier ones have been answered, as requests
 * from many relying sites arrive. Its latency is counted from the time it was
 * due, not from when a free connection sent it, so a server that falls behind
 * shows it in the tail (no coordinated omission, as in wrk2 and HdrHistogram).
 *
 * autocannon's `overallRate` is closed loop: each connection spends its
 * budget for the second back to back from the second's start, so the server
 * sees its connections all busy at the start of each second and idle at the
 * end, and a connection that cannot spend its budget in time lowers the rate
 * instead of lengthening the tail.
 *
 * HTTP/1.1 over keep-alive sockets of its own, one request at a time on each,
 * a new socket when every open one is busy: node:http's client costs about
 * twice autocannon's CPU per request, which on two cores the server under
 * test would pay for.
 */
import { connect, type Socket } from 'node:net';

import { runResult, type Load, type RequestSpec, type RunResult } from './run-result.ts';

/** Sockets it may open: more than the rate ever needs at once, so waiting shows as latency, not as a lower rate. */
const MAX_SOCKETS = 256;
const HEADER_END = Buffer.from('\r\n\r\n');

interface Pending {
  dueAt: number;
  body: string;
}

interface LaneHooks {
  answered(request: Pending, status: number, text: string): void;
  /** The lane can take another request. */
  free(lane: Lane): void;
  /** The socket closed, with the request it was carrying, if any. */
  lost(lane: Lane, request: Pending | undefined): void;
}

/** One keep-alive socket: one request at a time, each answer read by its Content-Length. */
class Lane {
  readonly socket: Socket;
  readonly #head: string;
  readonly #hooks: LaneHooks;
  #current: Pending | undefined;
  #buffered: Buffer = Buffer.alloc(0);
  #bodyStart = -1;
  #length = 0;
  #status = 0;

  constructor(target: URL, head: string, hooks: LaneHooks) {
    this.#head = head;
    this.#hooks = hooks;
    this.socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      const request = this.#current;
      this.#current = undefined;
      this.#hooks.lost(this, request);
    });
  }

  take(request: Pending): void {
    this.#current = request;
    this.socket.write(`${this.#head}Content-Length: ${Buffer.byteLength(request.body)}\r\n\r\n${request.body}`);
  }

  #read(chunk: Buffer): void {
    this.#buffered = this.#buffered.length ? Buffer.concat([this.#buffered, chunk]) : chunk;
    while (this.#current) {
      if (this.#bodyStart < 0) {
        const end = this.#buffered.indexOf(HEADER_END);
        if (end < 0) return;
        const header = this.#buffered.toString('latin1', 0, end);
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(header);
        // Every answer of the routes driven here has a length; anything else counts as an error.
        if (!length) {
          this.socket.destroy();
          return;
        }
        this.#status = Number(header.slice(9, 12));
        this.#length = Number(length[1]);
        this.#bodyStart = end + HEADER_END.length;
      }
      const bodyEnd = this.#bodyStart + this.#length;
      if (this.#buffered.length < bodyEnd) return;
      const text = this.#buffered.toString('utf8', this.#bodyStart, bodyEnd);
      this.#buffered = this.#buffered.subarray(bodyEnd);
      this.#bodyStart = -1;
      const request = this.#current;
      this.#current = undefined;
      this.#hooks.answered(request, this.#status, text);
      this.#hooks.free(this);
    }
  }
}

export async function driveAtRate(url: string, spec: RequestSpec, load: Load & { overallRate: number }): Promise<RunResult> {
  const target = new URL(spec.path, url);
  const head = `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n${Object.entries(spec.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}`;
  const durationMs = (load.duration ?? 10) * 1000;
  const total = Math.floor((load.overallRate * durationMs) / 1000);
  const intervalMs = 1000 / load.overallRate;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let wrong = 0;
  let ranOut = false;
  let lastBody = '';
  let settled = 0;
  const now = () => performance.now();
  const start = now();
  let lastAnswer = start;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => { resolveDone = resolve; });
  const settle = () => {
    settled += 1;
    lastAnswer = now();
    if (settled === total) resolveDone();
  };

  const lanes = new Set<Lane>();
  const idle: Lane[] = [];
  const waiting: Pending[] = [];
  let stopped = false;

  const answered = (request: Pending, status: number, text: string) => {
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status >= 200 && status < 300) {
      if (spec.expect && !spec.expect(text)) wrong += 1;
      else {
        ok += 1;
        spec.onOk?.(text);
      }
      latencies.push(now() - request.dueAt);
    } else {
      non2xx += 1;
    }
    settle();
  };
  const free = (lane: Lane) => {
    const request = waiting.shift();
    if (request) lane.take(request);
    else idle.push(lane);
  };
  const lost = (lane: Lane, request: Pending | undefined) => {
    lanes.delete(lane);
    const at = idle.indexOf(lane);
    if (at >= 0) idle.splice(at, 1);
    if (request) {
      errors += 1;
      settle();
    }
    // Requests waiting for a socket get a new one, unless the run is over.
    const next = waiting.shift();
    if (next) send(next);
  };
  const send = (request: Pending) => {
    if (stopped) {
      errors += 1;
      settle();
      return;
    }
    const lane = idle.pop();
    if (lane) lane.take(request);
    else if (lanes.size < MAX_SOCKETS) {
      const fresh = new Lane(target, head, { answered, free, lost });
      lanes.add(fresh);
      fresh.take(request);
    } else waiting.push(request);
  };

  let sent = 0;
  const tick = () => {
    const elapsed = now() - start;
    while (sent < total && sent * intervalMs <= elapsed) {
      let body = spec.body();
      if (body === undefined) {
        ranOut = true;
        body = lastBody;
      }
      lastBody = body;
      send({ dueAt: start + sent * intervalMs, body });
      sent += 1;
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
  // An answer that has not come 10 s after the last request was due counts as an error.
  const timeout = setTimeout(() => {
    stopped = true;
    for (const request of waiting.splice(0)) send(request);
    for (const lane of lanes) lane.socket.destroy();
  }, durationMs + 10_000);
  await done;
  clearTimeout(timeout);
  stopped = true;
  for (const lane of lanes) lane.socket.destroy();
  // The rate over the run: the last request was due one interval before
  // the end of the duration; its answer may come after.
  const seconds = Math.max(durationMs, lastAnswer - start) / 1000;
  return runResult({ ok, non2xx, errors, wrong, statusCodes, seconds, ranOut }, latencies);
}
