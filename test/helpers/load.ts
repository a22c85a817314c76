/**
 * Sites at work, for fault tests: each signed-in person's site refreshes
 * (retrying the same refresh token after a failure, as a client does),
 * introspects its access token and notifies the person, over and over, and
 * every answer is recorded with its timing.
 */
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import type { ClientMetadata } from 'oidc-provider';

import { LETTER_EVENT, type LetterEvent } from '../../src/index.ts';
import { Agent } from './agent.ts';
import { answerProblems } from './openapi.ts';
import { discover, signIn, startHarness, type Harness } from './reference.ts';
import type { SmtpSinkOptions } from './smtp.ts';

export interface Answer {
  what: 'refresh' | 'introspection' | 'notify';
  /** ms since the load started */
  at: number;
  ms: number;
  status: number;
  retryAfter: string | null;
  json: Record<string, unknown> | undefined;
  /** set when no answer came (network error, or none within 10 s) */
  failed?: string;
  /** For /api/notify: where the answer is not as the OpenAPI document says (test/helpers/openapi.ts). */
  undocumented?: string[];
}

export interface Chain { agent: Agent; sub: string; refresh: string; access: string; refreshes: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Load {
  started: number;
  answers: Answer[];
  chains: Chain[];
  /** ms since the load started */
  now(): number;
  stop(): Promise<void>;
  /** One refresh with the chain's current token, recorded. */
  refresh(chain: Chain): Promise<Answer>;
  introspect(token: string): Promise<Answer>;
  /**
   * A transactional notification for the chain's person (a letter goes),
   * titled `title`; recorded in `letters`, not in `answers`.
   */
  letter(chain: Chain, title: string): Promise<Answer>;
  letters: { title: string; status: number }[];
  /** Every try of a letter the worker finished since the load started (the plugin's letter event). */
  letterEvents: LetterEvent[];
}

/** Signs each address in to the site, then starts the load. */
export async function startLoad(h: Harness, site: ClientMetadata, emails: string[]): Promise<Load> {
  const basic = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;
  const config = await discover(h, site);
  const chains: Chain[] = await Promise.all(emails.map(async (email) => {
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, email);
    return { agent, sub: tokens.claims()!.sub, refresh: tokens.refresh_token!, access: tokens.access_token, refreshes: 0 };
  }));
  const answers: Answer[] = [];
  const started = Date.now();
  const now = () => Date.now() - started;

  async function call(what: Answer['what'], path: string, body: string, type: string): Promise<Answer> {
    const t0 = Date.now();
    try {
      const res = await fetch(`${h.issuer}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': type }, body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      const answer: Answer = { what, at: t0 - started, ms: Date.now() - t0, status: res.status, retryAfter: res.headers.get('retry-after'), json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
      // Recorded, not thrown: the load goes on, and unexpected() reports it.
      const undocumented = what === 'notify' ? answerProblems('POST', path, { status: res.status, headers: res.headers, body: text }) : [];
      return undocumented.length > 0 ? { ...answer, undocumented } : answer;
    } catch (err) {
      return { what, at: t0 - started, ms: Date.now() - t0, status: 0, retryAfter: null, json: undefined, failed: (err as Error).message };
    }
  }
  const form = 'application/x-www-form-urlencoded';
  const refresh = async (chain: Chain) => {
    const r = await call('refresh', '/token', new URLSearchParams({ grant_type: 'refresh_token', refresh_token: chain.refresh }).toString(), form);
    if (r.status === 200) {
      chain.refresh = r.json!.refresh_token as string;
      chain.access = r.json!.access_token as string;
      chain.refreshes += 1;
    }
    return r;
  };
  const introspect = (token: string) => call('introspection', '/token/introspection', new URLSearchParams({ token }).toString(), form);

  const notify = (chain: Chain, category: string, title: string) => call('notify', '/api/notify', JSON.stringify({ sub: chain.sub, category, title, body: 'Load.' }), 'application/json');
  const letters: Load['letters'] = [];
  const letterEvents: LetterEvent[] = [];
  h.reference.plugin.on(LETTER_EVENT, (e) => letterEvents.push(e));

  let stopped = false;
  const loops = chains.map(async (chain) => {
    while (!stopped) {
      answers.push(await refresh(chain));
      answers.push(await introspect(chain.access));
      answers.push(await notify(chain, 'product', 'Hello'));
      await sleep(10);
    }
  });
  return {
    started, answers, chains, now, refresh, introspect, letters, letterEvents,
    async letter(chain, title) {
      const a = await notify(chain, 'transactional', title);
      letters.push({ title, status: a.status });
      return a;
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Answers other than 200, 202 and 503, not as the OpenAPI document says, and requests that got no answer, as readable lines (distinct). */
export function unexpected(answers: Answer[]): string[] {
  return [...new Set(answers.filter((a) => a.failed || a.undocumented || ![200, 202, 503].includes(a.status))
    .map((a) => `${a.what} ${a.status} ${a.failed ?? a.undocumented?.join('; ') ?? JSON.stringify(a.json)}`))];
}

/** Plugin options for load: no rate limit in the way. */
export const UNLIMITED = { perPerson: { limit: 1_000_000, windowSeconds: 60 }, perClient: { limit: 1_000_000, windowSeconds: 60 } };

/** How long a request of a fault test waits for Redis (the plugin's redisTimeoutMs). */
export const FAULT_BOUND = 1000;

/**
 * How soon after Redis is back (redis-server accepts connections again, or
 * the sentinels announce the new master) the service serves again, and
 * letters queued then reach the mail server (docs/operations.md "What each fault does".
 */
export const BACK_WITHIN = 1000;

/**
 * The reference provider on `client` for a fault test: Redis waits bounded
 * by FAULT_BOUND, letters retried after 100 ms, no rate limit; its warnings
 * kept, and its mail server's options at hand (lettersInHand).
 */
export async function startFaultHarness(name: string, site: ClientMetadata, client: Redis | Cluster): Promise<{ h: Harness; warnings: string[]; errors: string[]; smtp: SmtpSinkOptions }> {
  client.on('error', () => {});
  const warnings: string[] = [];
  // Each error line as "message: reason", to count how often one repeats.
  const errors: string[] = [];
  const smtp: SmtpSinkOptions = {};
  const h = await startHarness(name, {
    clients: [site],
    client,
    smtp,
    logger: { info() {}, warn: (m: string) => warnings.push(m), error: (m: string, meta?: Record<string, unknown>) => errors.push(`${m}: ${String(meta?.reason ?? '')}`) },
    plugin: { redisTimeoutMs: FAULT_BOUND, letters: { backoffMs: 100 }, notify: UNLIMITED },
  });
  return { h, warnings, errors, smtp };
}

/**
 * Queues `count` letters titled `${name} 0`, `${name} 1`... (the chains'
 * people in turn) while the mail server (`smtp`, the harness' sink options)
 * takes `delayMs` before its 250 to each, and resolves once `inHand` of them
 * are with it: the worker holds them, and their 250 comes after whatever the
 * test does next. The mail server answers at once again for later letters.
 */
export async function lettersInHand(h: Harness, load: Load, smtp: SmtpSinkOptions, opts: { name: string; count: number; inHand: number; delayMs: number }): Promise<void> {
  smtp.delayMs = opts.delayMs;
  await Promise.all(Array.from({ length: opts.count }, (_, i) => load.letter(load.chains[i % load.chains.length]!, `${opts.name} ${i}`)));
  for (let i = 0; i < 200 && h.smtp.inTransfer < opts.inHand; i += 1) await sleep(10);
  smtp.delayMs = 0;
  if (h.smtp.inTransfer < opts.inHand) throw new Error(`${h.smtp.inTransfer} letters with the mail server, not ${opts.inHand}`);
}

/**
 * Queues a letter for each chain's person, titled `${name} 0`, `${name} 1`...,
 * and resolves with how long (ms) after their 202s the mail server had all of
 * them (Infinity when not within 5 s).
 */
export async function lettersThrough(h: Harness, load: Load, name: string): Promise<number> {
  const titles = load.chains.map((_, i) => `${name} ${i}`);
  await Promise.all(load.chains.map((chain, i) => load.letter(chain, titles[i]!)));
  const queued = Date.now();
  while (!titles.every((t) => h.smtp.letters.some((l) => l.subject === t))) {
    if (Date.now() - queued > 5000) return Infinity;
    await sleep(10);
  }
  return Date.now() - queued;
}

/** The first answer other than 503 to a request of each kind sent from `from` on: its end, in ms after `from`. */
export function servedAgain(answers: Answer[], from: number): Record<Answer['what'], number | undefined> {
  const out = {} as Record<Answer['what'], number | undefined>;
  for (const what of ['refresh', 'introspection', 'notify'] as const) {
    const ends = answers.filter((a) => a.what === what && a.at >= from && a.status !== 503).map((a) => a.at + a.ms - from);
    out[what] = ends.length ? Math.min(...ends) : undefined;
  }
  return out;
}

/**
 * What the service must show through a Redis fault under load, whatever the
 * fault: only 200, 202 and 503 (no 5xx, no hang); every 503 says
 * temporarily_unavailable with Retry-After, within `slowestMs`; every
 * request sent from `backBy` on (ms since the load started) is served, and
 * the letters queued then reached the mail server within BACK_WITHIN
 * (`lettersThroughMs`, from lettersThrough); every letter accepted goes out
 * once (by its X-Notification-Id), none given up; every refresh
 * chain in use works afterwards, and no reuse was reported (`warnings`).
 */
export async function expectFaultSurvived(h: Harness, load: Load, opts: { slowestMs: number; backBy: number; lettersThroughMs: number; warnings: string[] }): Promise<void> {
  const { answers } = load;
  expect(unexpected(answers)).to.deep.equal([]);
  const unavailable = answers.filter((a) => a.status === 503);
  expect(unavailable.length, 'the fault was seen').to.be.above(10);
  for (const a of unavailable) {
    expect(a.retryAfter).to.equal('2');
    expect(a.json).to.deep.equal({ error: 'temporarily_unavailable', error_description: 'the service cannot reach its data store right now; try again shortly' });
  }
  expect(Math.max(...answers.map((a) => a.ms)), 'slowest answer (ms)').to.be.below(opts.slowestMs);
  for (const what of ['refresh', 'introspection', 'notify'] as const) {
    const after = answers.filter((a) => a.what === what && a.at >= opts.backBy);
    expect(after.length, `${what} requests sent from ${opts.backBy} ms on`).to.be.above(5);
    expect(after.filter((a) => a.status === 503).length, `${what} answered 503 from ${opts.backBy} ms on`).to.equal(0);
  }

  expect(opts.lettersThroughMs, 'ms from the 202s to the mail server, for the letters queued once served again').to.be.below(BACK_WITHIN);
  expect(load.letters.map((l) => l.status), 'letters accepted').to.deep.equal(load.letters.map(() => 202));
  const titles = new Set(load.letters.map((l) => l.title));
  const arrived = () => h.smtp.letters.filter((l) => titles.has(l.subject ?? ''));
  // Until every letter is there and the queue is empty (a letter sent and then retried would show there).
  for (let i = 0; i < 200 && (new Set(arrived().map((l) => l.subject)).size < titles.size || await h.reference.plugin.letters.pending() > 0); i += 1) await sleep(100);
  await sleep(300);
  const ids = arrived().map((l) => String(l.headers.get('x-notification-id')));
  expect(arrived().map((l) => l.subject).sort(), 'one letter per notification').to.deep.equal([...titles].sort());
  expect(new Set(ids).size, 'distinct X-Notification-Id').to.equal(titles.size);
  // None given up on the way: one given up after the mail server took it would hide the second sending its next try makes.
  expect(load.letterEvents.filter((e) => e.outcome === 'failed'), 'letters given up').to.deep.equal([]);

  for (const chain of load.chains) {
    const r = await load.refresh(chain);
    expect(r.status, JSON.stringify(r.json)).to.equal(200);
    expect((await load.introspect(chain.access)).json).to.include({ active: true });
    expect(chain.refreshes).to.be.above(2);
  }
  expect(opts.warnings.filter((w) => /reuse detected/.test(w))).to.deep.equal([]);
}
