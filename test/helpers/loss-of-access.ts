/**
 * The service the loss-of-access tests run against: sites with and without a
 * back-channel receiver (one whose receiver is down), an organization's site
 * owned by two organizations, a log that keeps every line; and the calls a
 * person's browser and a site make there.
 */
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import type { Agent, Response } from './agent.ts';
import { logTo, type LogLine } from './log.ts';
import { startReceiver, type BackchannelReceiver } from './backchannel.ts';
import { freePort } from './net.ts';
import { discover, RP, siteClient, startHarness, type Harness } from './reference.ts';

export type Line = LogLine;

export interface LossOfAccess {
  h: Harness;
  receiver: BackchannelReceiver;
  /** Every line the service logged. */
  lines: Line[];
  siteA: ClientMetadata;
  orgSite: ClientMetadata;
  a: oidc.Configuration;
  b: oidc.Configuration;
  org: oidc.Configuration;
  dead: oidc.Configuration;
  close(): Promise<void>;
}

export async function startLossOfAccess(name: string): Promise<LossOfAccess> {
  const lines: Line[] = [];
  const logger = logTo(lines);
  const receiver = await startReceiver();
  const siteA = siteClient('loss-a', { backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
  const siteB = siteClient('loss-b');
  const orgSite = siteClient('loss-org', { client_name: 'Acme Intranet', backchannel_logout_uri: receiver.url });
  // A site whose back-channel receiver is down: nothing listens on that port.
  const deadSite = siteClient('loss-dead', { backchannel_logout_uri: `http://127.0.0.1:${await freePort()}/logout` });
  const h = await startHarness(name, {
    clients: [siteA, siteB, orgSite, deadSite],
    allowPrivateFetchHosts: ['127.0.0.1'],
    logger,
    // Every sign-in of a test file comes from 127.0.0.1: more than the default 30 code requests per IP.
    loginCodeLimits: { ...defaultLoginCodeLimits, perIp: { limit: 200, windowMs: 15 * 60_000 } },
    organizations: [{
      id: 'acme', name: 'Acme', admins: ['boss@acme.example'],
      members: ['ann@acme.example', 'bob@acme.example', 'cy@acme.example', 'eve@acme.example', 'flo@acme.example', 'gil@acme.example', 'hal@acme.example', 'ida@acme.example'], clients: ['loss-org'],
    }, {
      // A second owner of the same site: its members keep their access there when Acme removes them.
      id: 'acme-partner', name: 'Acme Partner', admins: ['partner-boss@acme.example'], members: ['flo@acme.example'], clients: ['loss-org'],
    }],
  });
  return {
    h, receiver, lines, siteA, orgSite,
    a: await discover(h, siteA),
    b: await discover(h, siteB),
    org: await discover(h, orgSite),
    dead: await discover(h, deadSite),
    async close() {
      await h.close();
      await receiver.close();
    },
  };
}

/** The calls of the loss-of-access tests, on the service `harness()` gives when they run. */
export function lossOfAccessCalls(harness: () => Harness) {
  const introspect = (config: oidc.Configuration, token: string) => oidc.tokenIntrospection(config, token);

  /** The console's JSON API as the person's browser calls it from the service's own page. */
  async function api(agent: Agent, method: string, path: string, headers: Record<string, string> = { origin: harness().issuer }) {
    const res = await agent.request(method, `${harness().issuer}/console/api${path}`, undefined, { accept: 'application/json', ...headers });
    return { status: res.status, body: res.body ? JSON.parse(res.body) as unknown : undefined, headers: res.headers };
  }

  /** The site sends the browser to sign in; follows until the site's callback or a page of the service. */
  async function authorize(agent: Agent, config: oidc.Configuration, extra: Record<string, string> = {}) {
    const redirectUri = `${RP}/${config.clientMetadata().client_id}/callback`;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid email', state: 'st-1',
      code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...extra,
    });
    return agent.follow(await agent.get(url.href), (u) => u.startsWith(RP));
  }

  const callbackParams = (res: Response) => Object.fromEntries(new URL(res.location!).searchParams);
  const accountId = async (email: string) => (await harness().reference.accounts.findByEmail(email))!.accountId;
  return { introspect, api, authorize, callbackParams, accountId };
}
