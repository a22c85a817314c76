/**
 * The service the session expiry tests run against (test/e2e/session-expiry.test.ts,
 * test/cluster/session-expiry.cluster.ts): a short session lifetime, a site
 * with a Shared Signals push stream to a receiver written with jose and a
 * back-channel logout receiver.
 */
import type { Cluster, Redis } from 'ioredis';
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { startReceiver } from './backchannel.ts';
import { documentedFetch } from './openapi.ts';
import { discover, siteClient, startHarness, type Harness } from './reference.ts';
import { startSsfReceiver, type SsfMetadata } from './ssf-receiver.ts';

export const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
/** The sessions' lifetime in these tests (the harness's `sessionTtlSeconds`). */
export const TTL_SECONDS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service with a short session lifetime, a site with a push stream and a back-channel receiver. */
export async function startExpiryService(name: string, opts: { embedded: boolean; sweepEveryMs: number; jwks?: { keys: never[] }; client?: Redis | Cluster; lettersWorker?: boolean }) {
  const ssf = await startSsfReceiver();
  const bcl = await startReceiver();
  const site: ClientMetadata = siteClient('exp-site', {
    grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid email offline_access ssf.manage ssf.read',
    backchannel_logout_uri: bcl.url, backchannel_logout_session_required: true,
  });
  // A second site with back-channel logout only (no stream).
  const other: ClientMetadata = siteClient('exp-other', { backchannel_logout_uri: bcl.url, backchannel_logout_session_required: true });
  const h = await startHarness(name, {
    embedded: opts.embedded, ...(opts.client ? { client: opts.client } : {}), clients: [site, other], allowPrivateFetchHosts: ['127.0.0.1'], sessionTtlSeconds: TTL_SECONDS,
    ...(opts.jwks ? { jwks: opts.jwks } : {}),
    plugin: { sessionExpiry: { sweepEveryMs: opts.sweepEveryMs }, ...(opts.lettersWorker === false ? { letters: { worker: false } } : {}) },
  });
  const [config, otherConfig] = await Promise.all([discover(h, site), discover(h, other)]);
  const metadata = await (await documentedFetch(`${h.issuer}/.well-known/ssf-configuration`)).json() as SsfMetadata;
  const manage = (await oidc.clientCredentialsGrant(config, { scope: 'ssf.manage' })).access_token;
  const created = await documentedFetch(`${h.issuer}/ssf/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events_requested: [`${CAEP}/session-revoked`], delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: ssf.url } }),
  });
  expect(created.status).to.equal(201);
  return {
    h, ssf, bcl, site, config, otherConfig, metadata,
    async close() { await h.close(); await ssf.close(); await bcl.close(); },
  };
}
export type ExpiryService = Awaited<ReturnType<typeof startExpiryService>>;

/** Waits (at most 10 s) until the letters and SETs in hand are done. */
export async function settled(h: Harness): Promise<void> {
  const plugin = h.reference.plugin;
  for (let i = 0; i < 200 && (await plugin.letters.pending()) + (await plugin.sharedSignals.pending()) > 0; i += 1) await sleep(50);
}

/** Waits (at most 10 s) until the receivers got `sets` SETs and `tokens` logout tokens. */
export async function received(s: ExpiryService, sets: number, tokens: number): Promise<void> {
  for (let i = 0; i < 200 && (s.ssf.pushed.length < sets || s.bcl.tokens.length < tokens); i += 1) await sleep(50);
}

/**
 * Waits until the session's lifetime since `from` has passed, and a second
 * more. `from` is read after the answer that saved the session last (the
 * sign-in's, the activity's): the server set the expiry before it, so it is
 * no later than `from` plus the lifetime however long the request took.
 */
export const pastLifetime = (from: number) => sleep(Math.max(0, from + TTL_SECONDS * 1000 + 1000 - Date.now()));

