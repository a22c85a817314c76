/** The refresh chain's model (test/e2e/refresh-chain-model.test.ts): the sites, the state it keeps, what it allows, the checks after every step. */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type * as oidc from 'openid-client';
import { type ReplayEvent } from '../../../src/index.ts';
import { Agent } from '../agent.ts';
import { scale } from '../scale.ts';
import { siteClient, type Harness } from '../reference.ts';
import { publicSiteClient, type RawAnswer, type SiteCalls } from '../site.ts';

export const LEEWAY = 1_000;
/** Within this much of the leeway's end (the server reads its clock between our two readings) either answer is right. */
export const MARGIN = 150;
export const SEED = Number(process.env.CHAIN_MODEL_SEED ?? 20261126);
/** 10 runs in `npm test`, 30 in the scale tier (test/helpers/scale.ts); CHAIN_MODEL_RUNS overrides both. */
export const RUNS = Number(process.env.CHAIN_MODEL_RUNS ?? scale(10, 30));
export const OMIT = new Set((process.env.CHAIN_MODEL_OMIT ?? '').split(',').map((s) => s.trim()).filter(Boolean));
export const VERBOSE = process.env.CHAIN_MODEL_VERBOSE === '1';
export const MAX_CHAINS = 4;
export const BROWSERS = 2;

export type SiteName = 'conf' | 'pub' | 'org';
export const SITE_NAMES: readonly SiteName[] = ['conf', 'pub', 'org'];
export const CLIENTS: Record<SiteName, ClientMetadata> = {
  conf: siteClient('chain-conf'),
  pub: publicSiteClient('chain-pub'),
  // A site of an organization the person belongs to: an admin may remove them.
  org: siteClient('chain-org', { client_name: 'Acme Intranet' }),
};
/** The leeway is for sites that authenticate; a public site's token is bound to nothing a thief lacks. */
export const CONFIDENTIAL: Record<SiteName, boolean> = { conf: true, pub: false, org: true };
/** The site a foreign presentation comes from. */
export const FOREIGN: Record<SiteName, SiteName> = { conf: 'pub', pub: 'conf', org: 'conf' };
export const ORG = 'acme';
export const ADMIN = 'chain-admin@acme.example';

// ---------------------------------------------------------------- the model

/** A rotation's answer, as the site got it (or did not: a lost answer). */
export interface Answer {
  text: string;
  /** When the request left and when its answer arrived: the rotation happened between. */
  sentAt: number;
  receivedAt: number;
  /** The access token it carried (index in the chain's `ats`). */
  at: number;
  /** A token of it was revoked, or its chain ended: it is never given again. */
  void: boolean;
}

export interface Chain {
  id: number;
  site: SiteName;
  offline: boolean;
  browser: number;
  /** The service session it was signed in through. */
  session: number;
  /** Every refresh token issued, in order: `rts[i + 1]` came from rotating `rts[i]`. */
  rts: string[];
  /** `answers[i]`: the answer of the rotation of `rts[i]`. */
  answers: (Answer | undefined)[];
  /** The refresh token the site holds (after a lost answer, one already rotated). */
  held: number;
  ats: { token: string; active: boolean }[];
  /** Refresh tokens the site revoked (RFC 7009). */
  revoked: Set<number>;
  idToken: string;
  /** Its grant ended: no token of it is active, and nothing is issued from it. */
  ended: boolean;
}

export interface Model {
  chains: Chain[];
  /** The service session each browser holds, if any. */
  sessions: (number | null)[];
  nextSession: number;
  /** Sites the person completed a sign-in at (Connected sites). */
  everAt: Set<SiteName>;
  blocked: Set<SiteName>;
  removedFromOrg: boolean;
  /** A rotation happened since the last wait past the leeway. */
  leewayOpen: boolean;
  /** What happened in this run, for the report. */
  trace: string[];
}

export interface Real {
  h: Harness;
  email: string;
  accountId: string;
  agents: Agent[];
  admin: Agent;
  configs: Record<SiteName, oidc.Configuration>;
  sites: Record<SiteName, SiteCalls>;
  events: ReplayEvent[];
  /** How often each step ran, with each outcome (CHAIN_MODEL_VERBOSE prints it). */
  tally: Map<string, number>;
  lines: { message: string; fields?: Record<string, unknown> }[];
  /** A client of the test's own redis-server, to refuse writes; none on the embedded store. */
  refuseWrites?: (on: boolean) => Promise<void>;
}

export const last = (c: Chain) => c.rts.length - 1;
/** Its last refresh token was revoked: it issues nothing more; its access tokens keep their state. */
export const closed = (c: Chain) => c.revoked.has(last(c));
export const live = (c: Chain) => !c.ended && !closed(c);
export const name = (c: Chain) => `#${c.id} (${c.site}${c.offline ? ', offline_access' : ''})`;

/** What a refresh token presented by its own site must get. */
export type Expected = 'rotate' | 'again' | 'refuse' | 'reuse' | 'again or reuse';

export function expected(c: Chain, k: number, sentAt: number, receivedAt: number): Expected {
  if (c.ended || c.revoked.has(k)) return 'refuse';
  if (k === last(c)) return 'rotate';
  const kept = c.answers[k]!;
  if (!CONFIDENTIAL[c.site] || k !== last(c) - 1 || kept.void) return 'reuse';
  if (receivedAt - kept.sentAt < LEEWAY - MARGIN) return 'again';
  if (sentAt - kept.receivedAt > LEEWAY + MARGIN) return 'reuse';
  return 'again or reuse';
}

/** The chain's grant is gone: every token of it. */
export function end(c: Chain): void {
  c.ended = true;
  for (const a of c.answers) if (a) a.void = true;
}

export function expectedActive(c: Chain): { rts: boolean[]; ats: boolean[] } {
  return {
    rts: c.rts.map((_, i) => live(c) && i === last(c)),
    ats: c.ats.map((a) => !c.ended && a.active),
  };
}

// ---------------------------------------------------------------- checks shared by the steps

/** Every token of every chain, introspected by its own site, against the model. */
export async function checkTokens(m: Model, r: Real): Promise<void> {
  const checks: Promise<string | undefined>[] = [];
  for (const c of m.chains) {
    const site = r.sites[c.site];
    const want = expectedActive(c);
    c.rts.forEach((rt, i) => checks.push(site.active(rt, 'refresh_token').then((active) =>
      (active === want.rts[i] ? undefined : `${name(c)} RT${i} introspects active:${active}, the model says ${want.rts[i]}`))));
    c.ats.forEach((at, j) => checks.push(site.active(at.token, 'access_token').then((active) =>
      (active === want.ats[j] ? undefined : `${name(c)} AT${j} introspects active:${active}, the model says ${want.ats[j]}`))));
  }
  const wrong = (await Promise.all(checks)).filter((w): w is string => w !== undefined);
  if (wrong.length) throw new Error(`introspection after the step:\n${wrong.map((w) => `    ${w}`).join('\n')}`);
}

/** A theft's cut of the person's access at the site runs beside the answer: wait for it (its log line), so the next step sees it done. */
export async function theftCutDone(r: Real, clientId: string, from: number): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (r.lines.slice(from).some((l) => l.message === 'site access revoked' && l.fields?.clientId === clientId)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the theft's cut of ${clientId}'s access did not finish within 5 s`);
}

/** What a step did (a line of the run's story) and how many reuses it must have reported, at which site. */
export type Outcome = { line: string; reports: number; site?: SiteName; kind?: Expected };

export const brief = (res: RawAnswer) => `${res.status} ${res.text.length > 120 ? `${res.text.slice(0, 120)}…` : res.text}`;

/**
 * The site presents one of the chain's refresh tokens at the token endpoint;
 * checks the answer against the model and updates it. `keep`: the site takes
 * the answer (false: it is lost on the way, the site keeps what it held).
 */
export async function present(m: Model, r: Real, c: Chain, k: number, keep: boolean): Promise<Outcome> {
  const sentAt = Date.now();
  const res = await r.sites[c.site].refresh(c.rts[k]!);
  const receivedAt = Date.now();
  let want = expected(c, k, sentAt, receivedAt);
  if (want === 'again or reuse') want = res.status === 200 ? 'again' : 'reuse';
  const got = `${name(c)}'s RT${k} → ${brief(res)}`;
  const kind = res.status !== 200 ? '' : res.text === c.answers[k]?.text ? 'the same answer again: ' : 'NEW tokens: ';
  const says = `${name(c)} presenting RT${k} (RT${last(c)} is the last issued): the model says ${want}; got ${kind}${brief(res)}`;
  switch (want) {
    case 'rotate': {
      expect(res.status, says).to.equal(200);
      expect(res.headers.get('cache-control'), says).to.equal('no-store');
      const { refresh_token: rt, access_token: at, id_token: idToken } = res.json;
      expect(rt, says).to.be.a('string').and.not.be.oneOf(c.rts);
      expect(at, says).to.be.a('string');
      c.answers[k] = { text: res.text, sentAt, receivedAt, at: c.ats.length, void: false };
      c.rts.push(rt!);
      c.ats.push({ token: at!, active: true });
      if (idToken) c.idToken = idToken;
      if (keep) c.held = last(c);
      m.leewayOpen = true;
      return { line: `${got}: RT${last(c)}, AT${c.ats.length - 1}${keep ? '' : ' (the answer is lost)'}`, reports: 0, site: c.site, kind: want };
    }
    case 'again': {
      expect(res.status, says).to.equal(200);
      expect(res.headers.get('cache-control'), says).to.equal('no-store');
      expect(res.text, `${says}: not the same answer again`).to.equal(c.answers[k]!.text);
      if (keep) c.held = k + 1;
      return { line: `${got}: the same answer again`, reports: 0, site: c.site, kind: want };
    }
    case 'refuse': {
      expect({ status: res.status, error: res.json.error }, says).to.deep.equal({ status: 400, error: 'invalid_grant' });
      return { line: `${got}: refused`, reports: 0, site: c.site, kind: want };
    }
    case 'reuse': {
      expect({ status: res.status, error: res.json.error }, says).to.deep.equal({ status: 400, error: 'invalid_grant' });
      // Theft: every grant of the person at the site goes, not only this chain.
      for (const other of m.chains) if (other.site === c.site) end(other);
      return { line: `${got}: a reuse, the person's chains at ${c.site} end`, reports: 1, site: c.site, kind: want };
    }
  }
}

// ---------------------------------------------------------------- the commands
