/**
 * Sites at work, for fault tests: each signed-in person's site refreshes
 * (retrying the same refresh token after a failure, as a client does),
 * introspects its access token and notifies the person, over and over, and
 * every answer is recorded with its timing.
 */
import type { ClientMetadata } from 'oidc-provider';

import { Agent } from './agent.ts';
import { discover, signIn, type Harness } from './reference.ts';

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
      return { what, at: t0 - started, ms: Date.now() - t0, status: res.status, retryAfter: res.headers.get('retry-after'), json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
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

  let stopped = false;
  const loops = chains.map(async (chain) => {
    while (!stopped) {
      answers.push(await refresh(chain));
      answers.push(await introspect(chain.access));
      answers.push(await call('notify', '/api/notify', JSON.stringify({ sub: chain.sub, category: 'product', title: 'Hello', body: 'Load.' }), 'application/json'));
      await sleep(10);
    }
  });
  return {
    started, answers, chains, now, refresh, introspect,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Answers other than 200, 202 and 503, and requests that got no answer, as readable lines (distinct). */
export function unexpected(answers: Answer[]): string[] {
  return [...new Set(answers.filter((a) => a.failed || ![200, 202, 503].includes(a.status))
    .map((a) => `${a.what} ${a.status} ${a.failed ?? JSON.stringify(a.json)}`))];
}

/** Plugin options for load: no rate limit in the way. */
export const UNLIMITED = { perPerson: { limit: 1_000_000, windowSeconds: 60 }, perClient: { limit: 1_000_000, windowSeconds: 60 } };
