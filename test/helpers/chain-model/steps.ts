/** The refresh chain's steps: what sites and people do, each through HTTP, and what the model says of it. */
import { expect } from 'chai';
import fc from 'fast-check';
import { signIn } from '../reference.ts';
import { consoleApi, signOutWithHint, type RawAnswer } from '../site.ts';
import { LEEWAY, MARGIN, MAX_CHAINS, type SiteName, CLIENTS, FOREIGN, ORG, type Chain, type Model, type Real, last, live, name, end, checkTokens, theftCutDone, type Outcome, brief, present } from './model.ts';

export abstract class Step implements fc.AsyncCommand<Model, Real> {
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
export abstract class ChainStep extends Step {
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
export class SignIn extends Step {
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
export class Refresh extends ChainStep {
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, c.held, true); }
}

/** The site refreshes, and the answer never reaches it: it keeps its old token. */
export class LoseAnswer extends ChainStep {
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, c.held, false); }
}

/** The token the chain rotated last, presented again (a retry, or a duplicate). */
export class Retry extends ChainStep {
  protected override may(_m: Readonly<Model>, c: Readonly<Chain>) { return c.rts.length >= 2; }
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, last(c) - 1, true); }
}

/** Theft: a rotated-away token presented after its successor was used. */
export class Theft extends ChainStep {
  protected override may(_m: Readonly<Model>, c: Readonly<Chain>) { return c.rts.length >= 3; }
  protected on(m: Model, r: Real, c: Chain) { return present(m, r, c, this.pick % (last(c) - 1), false); }
}

/** Another site presents the chain's refresh token: refused, and nothing changes. */
export class Foreign extends ChainStep {
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
export class RevokeRefresh extends ChainStep {
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
export class RevokeAccess extends ChainStep {
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
export class SignOut extends ChainStep {
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
export class LoseWrite extends ChainStep {
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

export const signedIn = (m: Readonly<Model>) => m.sessions.findIndex((s) => s !== null);
export const livesAt = (m: Readonly<Model>, site: SiteName) => m.chains.some((c) => c.site === site && !c.ended);

/** Connected sites: Block site, in the console of a browser signed in to the service. */
export class Block extends Step {
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
export class RemoveAccess extends Block {
  protected override async act(m: Model, r: Real) {
    const res = await consoleApi(r.h, r.agents[signedIn(m)]!, 'POST', `/sites/${CLIENTS[this.site].client_id}/remove-access`);
    expect(res.status, `Remove access: ${JSON.stringify(res.body)}`).to.equal(204);
    for (const c of m.chains) if (c.site === this.site) end(c);
    return { line: '204', reports: 0 };
  }
  override toString() { return `RemoveAccess(${this.site})`; }
}

/** Devices: Sign out everywhere (every session of the person; chains without offline_access end). */
export class SignOutEverywhere extends Step {
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
export class RemoveMember extends Step {
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
export class RemoveMemberHalfDone extends RemoveMember {
  protected override async act(m: Model, r: Real) {
    expect(await r.h.reference.plugin.organizations.recordRemoval(ORG, r.accountId)).to.equal('removed');
    m.removedFromOrg = true;
    for (const c of m.chains) if (c.site === 'org') end(c);
    return { line: 'removal recorded, grants left in place', reports: 0 };
  }
  override toString() { return 'RemoveMemberHalfDone'; }
}

/** Time passes beyond every answer's leeway (only after a rotation since the last wait: waits are dear). */
export class WaitPastLeeway extends Step {
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
