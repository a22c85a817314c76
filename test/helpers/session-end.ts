/**
 * The service the sign-out tests (/session/end) run against: four sites, one
 * with a back-channel receiver that requires sid, one pairwise; and what the
 * tests read of the answers (the marker cookies of the sign-out pages).
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import type { Agent } from './agent.ts';
import { startReceiver, type BackchannelReceiver } from './backchannel.ts';
import { discover, RP, siteClient, startHarness, type Harness } from './reference.ts';

export const siteA = siteClient('end-a');
const siteC = siteClient('end-c');
const siteD = siteClient('end-d', { subject_type: 'pairwise' });

export interface SessionEnd {
  h: Harness;
  receiver: BackchannelReceiver;
  /** The site with the back-channel receiver. */
  siteB: ClientMetadata;
  a: oidc.Configuration;
  b: oidc.Configuration;
  c: oidc.Configuration;
  d: oidc.Configuration;
  close(): Promise<void>;
}

export async function startSessionEnd(name: string): Promise<SessionEnd> {
  const receiver = await startReceiver();
  const siteB = siteClient('end-b', { backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
  // Over thirty sign-ins from one address: more codes than an IP may ask for by default.
  const many = { limit: 1000, windowMs: 15 * 60_000 };
  const h = await startHarness(name, {
    clients: [siteA, siteB, siteC, siteD], allowPrivateFetchHosts: ['127.0.0.1'],
    loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many },
  });
  return {
    h, receiver, siteB,
    a: await discover(h, siteA),
    b: await discover(h, siteB),
    c: await discover(h, siteC),
    d: await discover(h, siteD),
    async close() {
      await h.close();
      await receiver.close();
    },
  };
}

/** The sign-out as a site sends the browser there, on the service `harness()` gives when the tests run. */
export function sessionEndCalls(harness: () => Harness) {
  return {
    endSession: (agent: Agent, params: Record<string, string> = {}) =>
      agent.get(`${harness().issuer}/session/end?${new URLSearchParams(params)}`),
  };
}

export const stopAtSite = (u: string) => u.startsWith(RP);
/** The Set-Cookie line of `name` in a response, if any. */
export const cookieLine = (res: { headers: Headers }, name: string) => res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));
/** A short-lived marker cookie of the sign-out pages: only for /session/end, HttpOnly, SameSite=Lax, about 10 minutes. */
export function expectMarker(line: string | undefined, value: string) {
  expect(line).to.be.a('string');
  const [pair, ...attributes] = line!.split('; ');
  expect(pair).to.equal(value);
  const attrs = Object.fromEntries(attributes.map((a) => a.split('=') as [string, string?]).map(([k, v]) => [k.toLowerCase(), v ?? true]));
  expect(attrs).to.include({ path: '/session/end', samesite: 'lax', httponly: true });
  expect(Date.parse(attrs.expires as string) - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
}
/** The marker taken: cleared (expired) on the page that read it. */
export const expectCleared = (line: string | undefined, name: string) => {
  expect(line).to.match(new RegExp(`^${name.replace('.', '\\.')}=; path=/session/end; expires=Thu, 01 Jan 1970 00:00:00 GMT`));
};
