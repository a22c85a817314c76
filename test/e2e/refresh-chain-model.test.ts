/**
 * A model of the refresh chain, checked by random sequences of what sites and
 * people do, through HTTP against the reference provider (fast-check's
 * model-based testing: fc.commands and fc.asyncModelRun), on a redis-server
 * of its own (single node) and on the embedded store.
 *
 * The model says what the rules allow (docs/reuse-leeway.md "Refresh that survives a lost
 * answer", "Theft detection and revocation", "Loss of access", SPEC "Revoke a
 * token"), not what the code does today:
 * - a chain's last refresh token rotates while the chain lives (200, a new one);
 * - within the reuse leeway a confidential site presenting the token it
 *   rotated last gets that rotation's answer again, byte for byte, while the
 *   answer's refresh token is unused and nothing ended the chain or revoked a
 *   token of that answer; public sites get no leeway;
 * - any other rotated token presented again is a reuse: 400 invalid_grant,
 *   every chain of the person at the site ends, reported exactly once;
 * - a revoked refresh token is refused (400, nothing reported); revoking the
 *   last one closes the chain, its access tokens keep their state; revoking
 *   an access token leaves the chain going;
 * - Block site, Remove access, removal from the organization (also one whose
 *   revocation was cut off: membership is checked again) end the chains at
 *   the site; sign-out and sign out everywhere end the session's chains
 *   without offline_access; an ended chain issues nothing, leeway included;
 * - a write Redis refuses is a 503 with Retry-After, and nothing changed.
 * After every step every token seen is introspected against the model, and
 * the reuses reported are counted.
 *
 * CHAIN_MODEL_SEED and CHAIN_MODEL_RUNS change the seed and the number of
 * runs; CHAIN_MODEL_PATH and CHAIN_MODEL_REPLAY_PATH replay a reported
 * counterexample (fast-check prints both); CHAIN_MODEL_OMIT (steps' or sites'
 * names, comma-separated) leaves them out, to look for the next hole while one
 * is known; CHAIN_MODEL_NO_SHRINK=1 reports the first failure as it is;
 * CHAIN_MODEL_VERBOSE=1 prints every run's steps and a tally of outcomes.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type { ClientMetadata } from 'oidc-provider';
import type * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';
import { Agent } from '../helpers/agent.ts';
import { signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';
import { asSite, consoleApi, discoverSite, publicSiteClient, signOutWithHint, type RawAnswer, type SiteCalls } from '../helpers/site.ts';

const LEEWAY = 1_000;
/** Within this much of the leeway's end (the server reads its clock between our two readings) either answer is right. */
const MARGIN = 150;
const SEED = Number(process.env.CHAIN_MODEL_SEED ?? 20261126);
const RUNS = Number(process.env.CHAIN_MODEL_RUNS ?? 30);
const OMIT = new Set((process.env.CHAIN_MODEL_OMIT ?? '').split(',').map((s) => s.trim()).filter(Boolean));
const VERBOSE = process.env.CHAIN_MODEL_VERBOSE === '1';
const MAX_CHAINS = 4;
const BROWSERS = 2;

type SiteName = 'conf' | 'pub' | 'org';
const SITE_NAMES: readonly SiteName[] = ['conf', 'pub', 'org'];
const CLIENTS: Record<SiteName, ClientMetadata> = {
  conf: siteClient('chain-conf'),
  pub: publicSiteClient('chain-pub'),
  // A site of an organization the person belongs to: an admin may remove them.
  org: siteClient('chain-org', { client_name: 'Acme Intranet' }),
};
/** The leeway is for sites that authenticate; a public site's token is bound to nothing a thief lacks. */
const CONFIDENTIAL: Record<SiteName, boolean> = { conf: true, pub: false, org: true };
/** The site a foreign presentation comes from. */
const FOREIGN: Record<SiteName, SiteName> = { conf: 'pub', pub: 'conf', org: 'conf' };
const ORG = 'acme';
const ADMIN = 'chain-admin@acme.example';

// ---------------------------------------------------------------- the model

/** A rotation's answer, as the site got it (or did not: a lost answer). */
interface Answer {
  text: string;
  /** When the request left and when its answer arrived: the rotation happened between. */
  sentAt: number;
  receivedAt: number;
  /** The access token it carried (index in the chain's `ats`). */
  at: number;
  /** A token of it was revoked, or its chain ended: it is never given again. */
  void: boolean;
}

interface Chain {
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

interface Model {
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

interface Real {
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

const last = (c: Chain) => c.rts.length - 1;
/** Its last refresh token was revoked: it issues nothing more; its access tokens keep their state. */
const closed = (c: Chain) => c.revoked.has(last(c));
const live = (c: Chain) => !c.ended && !closed(c);
const name = (c: Chain) => `#${c.id} (${c.site}${c.offline ? ', offline_access' : ''})`;

/** What a refresh token presented by its own site must get. */
type Expected = 'rotate' | 'again' | 'refuse' | 'reuse' | 'again or reuse';

function expected(c: Chain, k: number, sentAt: number, receivedAt: number): Expected {
  if (c.ended || c.revoked.has(k)) return 'refuse';
  if (k === last(c)) return 'rotate';
  const kept = c.answers[k]!;
  if (!CONFIDENTIAL[c.site] || k !== last(c) - 1 || kept.void) return 'reuse';
  if (receivedAt - kept.sentAt < LEEWAY - MARGIN) return 'again';
  if (sentAt - kept.receivedAt > LEEWAY + MARGIN) return 'reuse';
  return 'again or reuse';
}

/** The chain's grant is gone: every token of it. */
function end(c: Chain): void {
  c.ended = true;
  for (const a of c.answers) if (a) a.void = true;
}

function expectedActive(c: Chain): { rts: boolean[]; ats: boolean[] } {
  return {
    rts: c.rts.map((_, i) => live(c) && i === last(c)),
    ats: c.ats.map((a) => !c.ended && a.active),
  };
}

// ---------------------------------------------------------------- checks shared by the steps

/** Every token of every chain, introspected by its own site, against the model. */
async function checkTokens(m: Model, r: Real): Promise<void> {
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
async function theftCutDone(r: Real, clientId: string, from: number): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (r.lines.slice(from).some((l) => l.message === 'site access revoked' && l.fields?.clientId === clientId)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the theft's cut of ${clientId}'s access did not finish within 5 s`);
}

/** What a step did (a line of the run's story) and how many reuses it must have reported, at which site. */
type Outcome = { line: string; reports: number; site?: SiteName; kind?: Expected };

const brief = (res: RawAnswer) => `${res.status} ${res.text.length > 120 ? `${res.text.slice(0, 120)}…` : res.text}`;

/**
 * The site presents one of the chain's refresh tokens at the token endpoint;
 * checks the answer against the model and updates it. `keep`: the site takes
 * the answer (false: it is lost on the way, the site keeps what it held).
 */
async function present(m: Model, r: Real, c: Chain, k: number, keep: boolean): Promise<Outcome> {
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

abstract class Step implements fc.AsyncCommand<Model, Real> {
  abstract check(m: Readonly<Model>): boolean;
  protected abstract act(m: Model, r: Real): Promise<Outcome>;
  abstract toString(): string;

  async run(m: Model, r: Real): Promise<void> {
    const events = r.events.length;
    const lines = r.lines.length;
    const step = m.trace.length + 1;
    try {
      const outcome = await this.act(m, r);
      m.trace.push(`${this}: ${outcome.line}`);
      const tally = `${this.constructor.name}${outcome.kind ? ` → ${outcome.kind}` : ''}`;
      r.tally.set(tally, (r.tally.get(tally) ?? 0) + 1);
      const seen = r.events.slice(events).map((e) => `${e.model} at ${e.clientId}${e.accountId === r.accountId ? '' : ` of ${e.accountId}`}`).join(', ');
      const clientId = outcome.site && CLIENTS[outcome.site].client_id;
      expect(seen || 'nothing', 'reuse reported (exactly once for a reuse, never otherwise)').to.equal(outcome.reports ? `RefreshToken at ${clientId}` : 'nothing');
      if (outcome.reports) await theftCutDone(r, clientId!, lines);
      await checkTokens(m, r);
    } catch (err) {
      const steps = m.trace.map((line, i) => `    ${i + 1}. ${line}`).join('\n');
      throw new Error(`${(err as Error).message}\n  at step ${step}: ${this}\n  steps of this run:\n${steps}`);
    }
  }
}

/**
 * A step on one chain. `chain` n < 3: the (n mod count)-th of the chains not
 * ended yet (when none is left, of all); n = 3: the (3 mod count)-th of all
 * chains, ended ones included. The run's steps name the chain by its #id.
 * `pick` chooses a token of it where there is a choice.
 */
abstract class ChainStep extends Step {
  readonly chain: number;
  readonly pick: number;
  constructor(chain: number, pick = 0) {
    super();
    this.chain = chain;
    this.pick = pick;
  }
  protected target(m: Readonly<Model>): Chain | undefined {
    const alive = m.chains.filter((c) => !c.ended);
    const pool = this.chain < 3 && alive.length > 0 ? alive : m.chains;
    return pool[this.chain % pool.length];
  }
  check(m: Readonly<Model>) {
    const c = this.target(m);
    return c !== undefined && this.may(m, c);
  }
  /** Whether the step may run on this chain now. */
  protected may(_m: Readonly<Model>, _c: Readonly<Chain>): boolean { return true; }
  protected abstract on(m: Model, r: Real, c: Chain): Promise<Outcome>;
  protected act(m: Model, r: Real) { return this.on(m, r, this.target(m)!); }
  toString() { return `${this.constructor.name}(${this.chain}${this.pick ? `, pick ${this.pick}` : ''})`; }
}

/** The person signs in at a site through one of their browsers (a new service session when it has none). */
class SignIn extends Step {
  readonly site: SiteName;
  readonly offline: boolean;
  readonly browser: number;
  constructor(site: SiteName, offline: boolean, browser: number) {
    super();
    this.site = site;
    this.offline = offline;
    this.browser = browser;
  }
  check(m: Readonly<Model>) {
    if (m.chains.length >= MAX_CHAINS || m.blocked.has(this.site) || (this.site === 'org' && m.removedFromOrg)) return false;
    // One chain per session and site: a second sign-in there would share its grant.
    const session = m.sessions[this.browser];
    return !m.chains.some((c) => !c.ended && c.site === this.site && c.browser === this.browser && c.session === session);
  }
  protected async act(m: Model, r: Real) {
    const { tokens } = await signIn(r.h, r.configs[this.site], r.agents[this.browser]!, r.email,
      this.offline ? { scope: 'openid email offline_access', prompt: 'consent' } : {});
    expect(tokens.refresh_token, 'sign-in gives a refresh token').to.be.a('string');
    const session = m.sessions[this.browser] ?? m.nextSession++;
    m.sessions[this.browser] = session;
    m.everAt.add(this.site);
    const c: Chain = {
      id: m.chains.length, site: this.site, offline: this.offline, browser: this.browser, session,
      rts: [tokens.refresh_token!], answers: [], held: 0, ats: [{ token: tokens.access_token, active: true }],
      revoked: new Set(), idToken: tokens.id_token!, ended: false,
    };
    m.chains.push(c);
    return { line: `chain ${name(c)} in session ${session}: RT0, AT0`, reports: 0 };
  }
  toString() { return `SignIn(${this.site}, ${this.offline ? 'offline_access' : 'online'}, browser ${this.browser})`; }
}

/** The site refreshes with the token it holds (after a lost answer: a retry with the rotated one). */
class Refresh extends ChainStep {
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, c.held, true); }
}

/** The site refreshes, and the answer never reaches it: it keeps its old token. */
class LoseAnswer extends ChainStep {
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, c.held, false); }
}

/** The token the chain rotated last, presented again (a retry, or a duplicate). */
class Retry extends ChainStep {
  protected override may(_m: Readonly<Model>, c: Readonly<Chain>) { return c.rts.length >= 2; }
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, last(c) - 1, true); }
}

/** Theft: a rotated-away token presented after its successor was used. */
class Theft extends ChainStep {
  protected override may(_m: Readonly<Model>, c: Readonly<Chain>) { return c.rts.length >= 3; }
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, this.pick % (last(c) - 1), false); }
}

/** Another site presents the chain's refresh token: refused, and nothing changes. */
class Foreign extends ChainStep {
  protected async on(_m: Model, r: Real, c: Chain) {
    const k = this.pick % c.rts.length;
    const res = await r.sites[FOREIGN[c.site]].refresh(c.rts[k]!);
    expect({ status: res.status, error: res.json.error }, `${FOREIGN[c.site]} presenting ${name(c)}'s RT${k}: ${brief(res)}`)
      .to.deep.equal({ status: 400, error: 'invalid_grant' });
    return { line: `${FOREIGN[c.site]} presents ${name(c)}'s RT${k} → refused`, reports: 0 };
  }
}

/**
 * RFC 7009, as the site: one refresh token of the chain (an even pick: the
 * last issued; an odd one: a rotated one). A rotated one revoked is that
 * token only (SPEC: "revokes that single token only"): the chain goes on from
 * its last one, but the answer that carried it is never given again.
 */
class RevokeRefresh extends ChainStep {
  protected async on(_m: Model, r: Real, c: Chain) {
    const k = this.pick % 2 === 0 || last(c) === 0 ? last(c) : (this.pick >> 1) % last(c);
    const res = await r.sites[c.site].revoke(c.rts[k]!, 'refresh_token');
    expect({ status: res.status, text: res.text }, `revoking ${name(c)}'s RT${k}`).to.deep.equal({ status: 200, text: '' });
    if (!c.ended) {
      c.revoked.add(k);
      if (k > 0) c.answers[k - 1]!.void = true;
    }
    return { line: `${name(c)}'s RT${k} → 200`, reports: 0 };
  }
}

/** RFC 7009, as the site: one access token of the chain (an even pick: the last issued; an odd one: any). */
class RevokeAccess extends ChainStep {
  protected async on(_m: Model, r: Real, c: Chain) {
    const j = this.pick % 2 === 0 ? c.ats.length - 1 : (this.pick >> 1) % c.ats.length;
    const res = await r.sites[c.site].revoke(c.ats[j]!.token, 'access_token');
    expect({ status: res.status, text: res.text }, `revoking ${name(c)}'s AT${j}`).to.deep.equal({ status: 200, text: '' });
    c.ats[j]!.active = false;
    // An answer that held it is never given again.
    for (const a of c.answers) if (a?.at === j) a.void = true;
    return { line: `${name(c)}'s AT${j} → 200`, reports: 0 };
  }
}

/** The site sends the browser to /session/end with the chain's ID token: the session ends, and every chain of it without offline_access. */
class SignOut extends ChainStep {
  protected override may(m: Readonly<Model>, c: Readonly<Chain>) { return m.sessions[c.browser] === c.session; }
  protected async on(m: Model, r: Real, c: Chain) {
    const agent = r.agents[c.browser]!;
    const res = await signOutWithHint(r.h, agent, CLIENTS[c.site], c.idToken);
    expect(res.status, `sign-out: ${res.status} ${res.body.slice(0, 300)}`).to.equal(303);
    expect((await consoleApi(r.h, agent, 'GET', '/sessions')).status, 'the browser is signed out').to.equal(401);
    for (const other of m.chains) if (other.session === c.session && !other.offline) end(other);
    m.sessions[c.browser] = null;
    return { line: `with ${name(c)}'s ID token: session ${c.session} ended`, reports: 0 };
  }
}

/** Redis refuses the refresh's writes: 503 with Retry-After, and nothing changed (on a single node the token endpoint's writes are one script). */
class LoseWrite extends ChainStep {
  protected override may(_m: Readonly<Model>, c: Readonly<Chain>) { return live(c) && c.held === last(c); }
  protected async on(_m: Model, r: Real, c: Chain) {
    await r.refuseWrites!(true);
    let res: RawAnswer;
    try {
      res = await r.sites[c.site].refresh(c.rts[c.held]!);
    } finally {
      await r.refuseWrites!(false);
    }
    expect({ status: res.status, error: res.json.error, retryAfter: res.headers.has('retry-after') }, `a refused write: ${brief(res)}`)
      .to.deep.equal({ status: 503, error: 'temporarily_unavailable', retryAfter: true });
    return { line: `${name(c)}'s RT${c.held} → 503, nothing changed`, reports: 0 };
  }
}

const signedIn = (m: Readonly<Model>) => m.sessions.findIndex((s) => s !== null);
const livesAt = (m: Readonly<Model>, site: SiteName) => m.chains.some((c) => c.site === site && !c.ended);

/** Connected sites: Block site, in the console of a browser signed in to the service. */
class Block extends Step {
  readonly site: SiteName;
  constructor(site: SiteName) {
    super();
    this.site = site;
  }
  check(m: Readonly<Model>) { return signedIn(m) >= 0 && livesAt(m, this.site); }
  protected async act(m: Model, r: Real) {
    const res = await consoleApi(r.h, r.agents[signedIn(m)]!, 'POST', `/sites/${CLIENTS[this.site].client_id}/block`);
    expect(res.status, `Block site: ${JSON.stringify(res.body)}`).to.equal(204);
    m.blocked.add(this.site);
    for (const c of m.chains) if (c.site === this.site) end(c);
    return { line: '204', reports: 0 };
  }
  toString() { return `Block(${this.site})`; }
}

/** Connected sites: Remove access (the site is not blocked: the person may sign in there again). */
class RemoveAccess extends Block {
  protected override async act(m: Model, r: Real) {
    const res = await consoleApi(r.h, r.agents[signedIn(m)]!, 'POST', `/sites/${CLIENTS[this.site].client_id}/remove-access`);
    expect(res.status, `Remove access: ${JSON.stringify(res.body)}`).to.equal(204);
    for (const c of m.chains) if (c.site === this.site) end(c);
    return { line: '204', reports: 0 };
  }
  override toString() { return `RemoveAccess(${this.site})`; }
}

/** Devices: Sign out everywhere (every session of the person; chains without offline_access end). */
class SignOutEverywhere extends Step {
  check(m: Readonly<Model>) { return signedIn(m) >= 0 && m.chains.some((c) => !c.ended); }
  protected async act(m: Model, r: Real) {
    const sessions = new Set(m.sessions.filter((s): s is number => s !== null));
    const res = await consoleApi(r.h, r.agents[signedIn(m)]!, 'POST', '/sessions/end-all');
    expect(res, 'sign out everywhere').to.deep.equal({ status: 200, body: { ended: sessions.size } });
    for (const c of m.chains) if (sessions.has(c.session) && !c.offline) end(c);
    m.sessions = m.sessions.map(() => null);
    return { line: `${sessions.size} session(s) ended`, reports: 0 };
  }
  toString() { return 'SignOutEverywhere'; }
}

/** The organization's admin removes the person: their chains at its site end, and they may not sign in there again. */
class RemoveMember extends Step {
  check(m: Readonly<Model>) { return !m.removedFromOrg && livesAt(m, 'org'); }
  protected async act(m: Model, r: Real) {
    const res = await consoleApi(r.h, r.admin, 'DELETE', `/orgs/${ORG}/members/${r.accountId}`);
    expect(res.status, `member removal: ${JSON.stringify(res.body)}`).to.equal(204);
    m.removedFromOrg = true;
    for (const c of m.chains) if (c.site === 'org') end(c);
    return { line: '204', reports: 0 };
  }
  toString() { return 'RemoveMember'; }
}

/**
 * An organization's removal whose revocation was cut off half-way: only the
 * removal is recorded (the plugin's export), the grants are left in place.
 * Membership is checked again at refresh and introspection (docs/loss-of-access.md "Loss of
 * access"), so the chains at its site end all the same.
 */
class RemoveMemberHalfDone extends RemoveMember {
  protected override async act(m: Model, r: Real) {
    expect(await r.h.reference.plugin.organizations.recordRemoval(ORG, r.accountId)).to.equal('removed');
    m.removedFromOrg = true;
    for (const c of m.chains) if (c.site === 'org') end(c);
    return { line: 'removal recorded, grants left in place', reports: 0 };
  }
  override toString() { return 'RemoveMemberHalfDone'; }
}

/** Time passes beyond every answer's leeway (only after a rotation since the last wait: waits are dear). */
class WaitPastLeeway extends Step {
  check(m: Readonly<Model>) { return m.leewayOpen; }
  protected async act(m: Model) {
    const latest = Math.max(0, ...m.chains.flatMap((c) => c.answers.map((a) => a?.receivedAt ?? 0)));
    const ms = Math.max(0, latest + LEEWAY + MARGIN - Date.now());
    await new Promise((resolve) => setTimeout(resolve, ms));
    m.leewayOpen = false;
    return { line: `waited ${ms} ms`, reports: 0 };
  }
  toString() { return 'WaitPastLeeway'; }
}

// ---------------------------------------------------------------- the property

function commandArbitrary(withLostWrites: boolean): fc.Arbitrary<Step> {
  const chain = fc.nat(3);
  const pick = fc.nat(5);
  const site = fc.constantFrom(...SITE_NAMES.filter((s) => !OMIT.has(s)));
  const all: [string, number, fc.Arbitrary<Step>][] = [
    ['SignIn', 10, fc.tuple(site, fc.boolean(), fc.nat(BROWSERS - 1)).map(([s, o, b]) => new SignIn(s, o, b))],
    ['Refresh', 16, chain.map((c) => new Refresh(c))],
    ['LoseAnswer', 8, chain.map((c) => new LoseAnswer(c))],
    ['Retry', 10, chain.map((c) => new Retry(c))],
    ['Theft', 4, fc.tuple(chain, pick).map(([c, p]) => new Theft(c, p))],
    ['Foreign', 2, fc.tuple(chain, pick).map(([c, p]) => new Foreign(c, p))],
    ['RevokeRefresh', 6, fc.tuple(chain, pick).map(([c, p]) => new RevokeRefresh(c, p))],
    ['RevokeAccess', 6, fc.tuple(chain, pick).map(([c, p]) => new RevokeAccess(c, p))],
    ['LoseWrite', withLostWrites ? 4 : 0, chain.map((c) => new LoseWrite(c))],
    ['Block', 2, site.map((s) => new Block(s))],
    ['RemoveAccess', 2, site.map((s) => new RemoveAccess(s))],
    ['SignOut', 2, chain.map((c) => new SignOut(c))],
    ['SignOutEverywhere', 1, fc.constant(new SignOutEverywhere())],
    ['RemoveMember', 1, fc.constant(new RemoveMember())],
    ['RemoveMemberHalfDone', 1, fc.constant(new RemoveMemberHalfDone())],
    // Rare: each costs the leeway in time.
    ['WaitPastLeeway', 1, fc.constant(new WaitPastLeeway())],
  ];


  const chosen = all.filter(([n, weight]) => weight > 0 && !OMIT.has(n));
  return fc.oneof(...chosen.map(([, weight, arbitrary]) => ({ weight, arbitrary })));
}

for (const kind of ['redis', 'embedded'] as const) {
  describe(`the refresh chain against its model (${kind}${kind === 'redis' ? ', a redis-server of its own' : ''}; seed ${SEED}, ${RUNS} runs)`, () => {
    let server: OwnedRedis | undefined;
    let control: Redis | undefined;
    let h: Harness;
    let admin: Agent;
    let adminId: string;
    const members: string[] = [];
    const events: ReplayEvent[] = [];
    const lines: Real['lines'] = [];
    const tally = new Map<string, number>();
    let configs: Record<SiteName, oidc.Configuration>;
    let person = 0;

    before(async function () {
      this.timeout(60_000);
      const many = { limit: 100_000, windowMs: 15 * 60_000 };
      const logged = (message: string, fields?: Record<string, unknown>) => { lines.push({ message, fields }); };
      let client: Redis | undefined;
      if (kind === 'redis') {
        // Its own server: the lost-write step refuses writes (min-replicas-to-write), which the shared Redis must never do.
        server = await startRedisServer();
        client = new Redis(server.url, { maxRetriesPerRequest: 2 });
        control = new Redis(server.url, { maxRetriesPerRequest: 2 });
      }
      h = await startHarness(`chain-model-${kind}`, {
        clients: Object.values(CLIENTS),
        ...(client ? { client } : { embedded: true }),
        logger: { info: logged, warn: logged, error: logged },
        loginCodeLimits: { ...defaultLoginCodeLimits, perAddress: many, perIp: many, checksPerIp: many },
        organizations: [{ id: ORG, name: 'Acme', admins: [ADMIN], members: [], clients: [CLIENTS.org.client_id] }],
        plugin: { refreshReuseLeeway: LEEWAY / 1000 },
      });
      h.reference.plugin.on(REPLAY_EVENT, (e) => { events.push(e); });
      configs = Object.fromEntries(await Promise.all(SITE_NAMES.map(async (s) => [s, await discoverSite(h, CLIENTS[s])]))) as Record<SiteName, oidc.Configuration>;
      adminId = (await h.reference.accounts.findOrCreate(ADMIN)).accountId;
      admin = new Agent();
      await signIn(h, configs.org, admin, ADMIN);
    });
    after(async () => {
      if (VERBOSE) console.log(`steps run (${kind}):\n${[...tally].sort().map(([k, n]) => `  ${k}: ${n}`).join('\n')}`);
      await h?.close();
      await control?.quit();
      await server?.close();
    });

    /** A fresh person (a member of the organization) and two fresh browsers for each run. */
    async function setup(): Promise<{ model: Model; real: Real }> {
      person += 1;
      const email = `chain-${kind}-${person}@acme.example`;
      const { accountId } = await h.reference.accounts.findOrCreate(email);
      members.push(accountId);
      h.reference.plugin.organizations.define([{ id: ORG, name: 'Acme', admins: [adminId], members: [...members], clients: [CLIENTS.org.client_id] }]);
      return {
        model: {
          chains: [], sessions: Array.from({ length: BROWSERS }, () => null), nextSession: 1,
          everAt: new Set(), blocked: new Set(), removedFromOrg: false, leewayOpen: false, trace: [],
        },
        real: {
          h, email, accountId, admin, configs, events, lines, tally,
          agents: Array.from({ length: BROWSERS }, () => new Agent()),
          sites: { conf: asSite(h, CLIENTS.conf), pub: asSite(h, CLIENTS.pub), org: asSite(h, CLIENTS.org) },
          ...(control ? { refuseWrites: async (on: boolean) => { await control!.config('SET', 'min-replicas-to-write', on ? '1' : '0'); } } : {}),
        },
      };
    }

    it('follows the model after every step of random sequences of refreshes, retries, lost answers and writes, revocations, endings and theft', async function () {
      this.timeout(20 * 60_000);
      await fc.assert(
        fc.asyncProperty(
          fc.commands([commandArbitrary(kind === 'redis')], { maxCommands: 40, size: 'max', replayPath: process.env.CHAIN_MODEL_REPLAY_PATH }),
          async (cmds) => {
            const run = await setup();
            await fc.asyncModelRun(() => run, cmds);
            if (VERBOSE) console.log(`run of ${run.real.email} (${[...cmds].length} commands generated):\n${run.model.trace.map((line, i) => `  ${i + 1}. ${line}`).join('\n')}`);
          },
        ),
        { numRuns: RUNS, seed: SEED, path: process.env.CHAIN_MODEL_PATH, endOnFailure: process.env.CHAIN_MODEL_NO_SHRINK === '1' },
      );
    });
  });
}
