/**
 * Refresh chains and how they end, as the "access that was removed stays
 * removed" tests use them: the sites (confidential and public), the service
 * with a reuse leeway on Redis (the Cluster in the Cluster pass) or the
 * embedded store, and the calls a site and a person make there.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { REFRESH_REPLAYED_EVENT, REPLAY_EVENT, type AnswerAgainEvent, type ReplayEvent } from '../../src/index.ts';
import { Agent } from './agent.ts';
import { REDIS_CLUSTER, testRedis } from './redis.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from './reference.ts';

export const confidential = siteClient('ended-conf');
export const publicSite = publicClient('ended-public');
export const orgSite = siteClient('ended-org');
export const wholeSite = siteClient('ended-whole');
export const wholePublic = publicClient('ended-whole-public');
export const other = siteClient('ended-other');
export const LEEWAY = 30;
const many = { limit: 10_000, windowMs: 15 * 60_000 };

/** Where the tests run: the Cluster in the Cluster pass, else a single Redis node and the embedded store. */
export const KINDS = REDIS_CLUSTER ? ['redis cluster'] as const : ['redis', 'embedded'] as const;
export type Kind = typeof KINDS[number];

export interface Chain {
  agent: Agent;
  email: string;
  site: ClientMetadata;
  /** The refresh token the first refresh replaced. */
  rt1: string;
  rt2: string;
  at2: string;
  idToken: string;
}

export interface EndedChains {
  h: Harness;
  /** Every reuse reported (REPLAY_EVENT). */
  replays: ReplayEvent[];
  /** Every answer given again within the leeway (REFRESH_REPLAYED_EVENT). */
  answeredAgain: AnswerAgainEvent[];
  configs: Map<string, oidc.Configuration>;
  close(): Promise<void>;
}

export async function startEndedChains(name: string, kind: Kind): Promise<EndedChains> {
  const replays: ReplayEvent[] = [];
  const answeredAgain: AnswerAgainEvent[] = [];
  const configs = new Map<string, oidc.Configuration>();
  const h = await startHarness(`${name}-${kind.replace(' ', '-')}`, {
    clients: [confidential, publicSite, orgSite, wholeSite, wholePublic, other],
    ...(kind === 'embedded' ? { embedded: true } : { client: testRedis() }),
    loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many, perAddress: many },
    organizations: [{ id: 'ended-org', name: 'Ended Org', admins: ['ended-boss@example.com'], members: Array.from({ length: 10 }, (_, i) => `ended-org${i}@example.com`), clients: ['ended-org'] }],
    plugin: { refreshReuseLeeway: LEEWAY },
  });
  h.reference.plugin.on(REPLAY_EVENT, (e) => replays.push(e));
  h.reference.plugin.on(REFRESH_REPLAYED_EVENT, (e) => answeredAgain.push(e));
  for (const site of [confidential, publicSite, orgSite, wholeSite, wholePublic, other]) configs.set(site.client_id, await discoverSite(h, site));
  return { h, replays, answeredAgain, configs, close: () => h.close() };
}

/** The calls of the tests, on what `world()` gives when they run. */
export function endedChainsCalls(world: () => EndedChains, kind: Kind) {
  let n = 0;
  const config = (site: ClientMetadata) => world().configs.get(site.client_id)!;

  /** The token endpoint as the site calls it: the raw answer. */
  async function refresh(site: ClientMetadata, refreshToken: string) {
    const res = await fetch(`${world().h.issuer}/token`, {
      method: 'POST',
      headers: { ...clientAuth(site), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, ...(site.client_secret ? {} : { client_id: site.client_id }) }),
    });
    return { status: res.status, json: await res.json() as Record<string, string> };
  }

  /**
   * Whether a token is live, as its site can tell: introspection for a
   * confidential site; a public site cannot authenticate to introspection, so
   * its access token is tried at userinfo and its refresh token is left to
   * the refresh that follows in each check.
   */
  async function active(site: ClientMetadata, token: string): Promise<boolean> {
    if (site.client_secret) return (await oidc.tokenIntrospection(config(site), token)).active;
    const res = await fetch(`${world().h.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });
    return res.status === 200;
  }

  async function revoke(site: ClientMetadata, token: string) {
    const res = await fetch(`${world().h.issuer}/token/revocation`, {
      method: 'POST',
      headers: { ...clientAuth(site), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, ...(site.client_secret ? {} : { client_id: site.client_id }) }),
    });
    expect(res.status).to.equal(200);
  }

  /** Signs a new person in at the site and refreshes once: RT1 is replaced by RT2. */
  async function newChain(site: ClientMetadata, opts: { email?: string; offline?: boolean } = {}): Promise<Chain> {
    n += 1;
    const email = opts.email ?? `ended-${kind.replace(' ', '-')}-${n}@example.com`;
    const agent = new Agent();
    const { tokens } = await signIn(world().h, config(site), agent, email, { scope: opts.offline ? 'openid email offline_access' : 'openid email', ...(opts.offline ? { prompt: 'consent' } : {}) });
    const second = await refresh(site, tokens.refresh_token!);
    expect(second.status, JSON.stringify(second.json)).to.equal(200);
    return { agent, email, site, rt1: tokens.refresh_token!, rt2: second.json.refresh_token!, at2: second.json.access_token!, idToken: tokens.id_token! };
  }

  /** After an ending: the replaced token again within the leeway, refused; the chain's tokens dead; nothing new. */
  async function expectEnded(chain: Chain) {
    const again = await refresh(chain.site, chain.rt1);
    expect({ status: again.status, error: again.json.error }, JSON.stringify(again.json)).to.deep.equal({ status: 400, error: 'invalid_grant' });
    expect(again.json).to.not.have.property('access_token');
    if (chain.site.client_secret) expect(await active(chain.site, chain.rt2), 'the new refresh token').to.equal(false);
    expect(await active(chain.site, chain.at2), 'the new access token').to.equal(false);
    const next = await refresh(chain.site, chain.rt2);
    expect({ status: next.status, error: next.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    // And again, after the chain is known dead: still nothing.
    expect((await refresh(chain.site, chain.rt1)).status).to.equal(400);
  }

  async function consoleApi(agent: Agent, method: string, path: string) {
    const res = await agent.request(method, `${world().h.issuer}/console/api${path}`, undefined, { accept: 'application/json', origin: world().h.issuer });
    return res.status;
  }

  const accountId = async (email: string) => (await world().h.reference.accounts.findByEmail(email))!.accountId;

  return { config, refresh, active, revoke, newChain, expectEnded, consoleApi, accountId };
}

async function discoverSite(h: Harness, site: ClientMetadata): Promise<oidc.Configuration> {
  if (site.client_secret) return discover(h, site);
  return oidc.discovery(new URL(h.issuer), site.client_id, { token_endpoint_auth_method: 'none' }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
}

/** A public site (a mobile or browser app): no secret, PKCE. */
function publicClient(clientId: string): ClientMetadata {
  const { client_secret: _secret, ...site } = siteClient(clientId, { token_endpoint_auth_method: 'none' });
  return site;
}

function clientAuth(site: ClientMetadata): Record<string, string> {
  return site.client_secret ? { authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}` } : {};
}
