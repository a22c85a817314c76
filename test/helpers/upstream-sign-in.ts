/**
 * Social sign-in as its tests walk it: the reference provider with one
 * upstream (test/helpers/upstream.ts) and a site, a log that keeps every
 * line, and the steps of a sign-in through the upstream as a browser without
 * JavaScript takes them (the agent). Each step keeps the upstream's codes and
 * states, which must never reach the log.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { formFor, type Agent, type Response } from './agent.ts';
import { freePort } from './net.ts';
import { discover, siteClient, startHarness, throughSignInPages, type Harness } from './reference.ts';
import type { UpstreamSignalsConfig } from '../../examples/reference/upstreams.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';

export const site = siteClient('up-site');
export const REDIRECT = site.redirect_uris![0]!;
export const isCallback = (u: string) => u.startsWith(REDIRECT);
export const UPSTREAM = { id: 'social', name: 'Social Example' };

export function claimsOf(tokens: oidc.TokenEndpointResponseHelpers): Record<string, unknown> {
  return tokens.claims() as Record<string, unknown>;
}

export interface UpstreamSignIn {
  h: Harness;
  upstream: TestUpstream;
  /** The site's openid-client configuration. */
  config: oidc.Configuration;
  /** Every line the service logged. */
  logged: string[];
  /** What must never reach a log: the codes and states of the upstream's answers. */
  secrets: string[];
  close(): Promise<void>;
}

/** `upstreamConfig`: more of the upstream's configuration (`trustedEmailDomains`, `signals`); `harness`: more of the harness' (the store, clients, settings). */
export async function startUpstreamSignIn(name: string, upstreamConfig: { trustedEmailDomains?: string[]; signals?: UpstreamSignalsConfig } = {}, harness: Partial<Parameters<typeof startHarness>[1]> = {}): Promise<UpstreamSignIn> {
  const logged: string[] = [];
  const logger = {
    info: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
    warn: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
    error: (m: string, f?: Record<string, unknown>) => { logged.push(`${m} ${JSON.stringify(f ?? {})}`); },
  };
  const port = await freePort();
  const upstream = await startTestUpstream({ redirectUri: `http://127.0.0.1:${port}/upstream/${UPSTREAM.id}/callback` });
  try {
    const h = await startHarness(name, {
      ...harness,
      port,
      clients: [site, ...(harness.clients ?? [])],
      logger,
      upstreams: [{ ...UPSTREAM, issuer: upstream.issuer, ...upstream.client, scope: 'openid email profile', ...upstreamConfig }],
      loginCodeLimits: { ...defaultLoginCodeLimits, checksPerIp: { limit: 1000, windowMs: 60_000 } },
    });
    return {
      h, upstream, config: await discover(h, site), logged, secrets: [],
      async close() {
        await h.close();
        await upstream.close();
      },
    };
  } catch (err) {
    await upstream.close();
    throw err;
  }
}

/** The steps of a sign-in through the upstream, on what `world()` gives when the tests run. */
export function upstreamSteps(world: () => UpstreamSignIn) {
  /** The site sends the browser to sign in; the service's login page. */
  async function loginPage(agent: Agent, c: oidc.Configuration = world().config, client: ClientMetadata = site): Promise<{ page: Response; verifier: string; state: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(c, {
      redirect_uri: client.redirect_uris![0]!, scope: 'openid email', state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const page = await agent.follow(await agent.get(url.href));
    expect(page.status, page.body.slice(0, 500)).to.equal(200);
    return { page, verifier, state };
  }

  /** Presses "Continue with Social Example": the upstream's login form, and the request it got. */
  async function toUpstream(agent: Agent, page: Response): Promise<{ form: Response; request: URLSearchParams }> {
    const button = formFor(page.body, `/upstream/${UPSTREAM.id}`);
    const res = await agent.submit(page, button);
    expect(res.status).to.equal(303);
    expect(res.location!.startsWith(`${world().upstream.issuer}/auth?`), res.location).to.equal(true);
    const request = new URL(res.location!).searchParams;
    const form = await agent.follow(res);
    return { form, request };
  }

  /** Signs in at the upstream as `sub`; the response back at the service (after its own redirects). */
  async function upstreamLogin(agent: Agent, form: Response, sub: string): Promise<Response> {
    const back = await agent.submit(form, formFor(form.body, '/login'), { sub });
    // The upstream's redirects up to its answer at the service's redirect URI.
    let res = back;
    while (res.location && !res.location.startsWith(world().h.issuer)) res = await agent.get(res.location);
    const answer = new URL(res.location!);
    world().secrets.push(answer.searchParams.get('code') ?? '', answer.searchParams.get('state') ?? '');
    return agent.follow(res, isCallback);
  }

  /** The rest of a sign-in at the service (consent), and the site's tokens. */
  async function finish(agent: Agent, res: Response, verifier: string, state: string) {
    const done = await throughSignInPages(world().h, agent, res, isCallback, 'unused@example.com');
    expect(done.res.location, done.res.body.slice(0, 800)).to.satisfy(isCallback);
    return oidc.authorizationCodeGrant(world().config, new URL(done.res.location!), { pkceCodeVerifier: verifier, expectedState: state });
  }

  async function signInThroughUpstream(agent: Agent, sub: string) {
    const { page, verifier, state } = await loginPage(agent);
    const { form, request } = await toUpstream(agent, page);
    const res = await upstreamLogin(agent, form, sub);
    return { tokens: await finish(agent, res, verifier, state), request, form };
  }

  async function openConsole(agent: Agent): Promise<Response> {
    const page = await agent.follow(await agent.get(`${world().h.issuer}/console`));
    expect(page.url).to.equal(`${world().h.issuer}/console`);
    return page;
  }

  const post = (agent: Agent, page: Response, suffix: string, extra: Record<string, string> = {}) =>
    agent.request('POST', new URL(formFor(page.body, suffix).action, page.url).href, { ...formFor(page.body, suffix).fields, ...extra }, { origin: world().h.issuer });

  async function linksOf(accountId: string) {
    const raw = await world().h.redis!.hgetall(`${world().h.prefix}account:{${accountId}}:upstreams`);
    return Object.entries(raw).map(([upstream, json]) => ({ upstream, ...(JSON.parse(json) as { sub: string; verifiedEmail?: string; name?: string }) }));
  }

  return { loginPage, toUpstream, upstreamLogin, signInThroughUpstream, openConsole, post, linksOf };
}

/** The log holds sign-ins and failures, and not one of the upstream's codes and states (nor its client secret). */
export function expectCleanLog({ logged, secrets, upstream }: UpstreamSignIn): void {
  const text = logged.join('\n');
  expect(text).to.include('signed in through an upstream').and.include('upstream sign-in failed');
  expect(secrets.length).to.be.greaterThan(10);
  for (const secret of secrets.filter((s) => s.length >= 20)) expect(text, secret).to.not.include(secret);
  expect(text).to.not.include(upstream.client.client_secret);
}
