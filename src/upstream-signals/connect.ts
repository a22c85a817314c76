import { randomId } from '../random-pool.ts';
import * as commands from '../store/commands.ts';
import type { Store } from '../store/store.ts';
import { clientCredentialsTokens, type ClientCredentials } from './credentials.ts';
import type { SignalUpstream, UpstreamReceiver } from './receiver.ts';

const TIMEOUT_MS = 10_000;

/** The push stream at an upstream, as connect() made or found it (`plugin.upstreamSignals.stream(id)`). */
export interface UpstreamStream {
  stream_id: string;
  endpoint_url: string;
  /** `created` here, or `adopted` (one pushing to us was there). */
  how: 'created' | 'adopted';
  connectedAt: number;
  /** When the upstream's verification SET with our state arrived (SSF 1.0 section 8.1.4). */
  verifiedAt?: number | undefined;
}

/**
 * Connects the service to an SSF transmitter upstream (SSF 1.0 sections 7
 * and 8): reads its `/.well-known/ssf-configuration` (`configurationUrl`),
 * gets a token by client credentials (`stream`), adopts its stream that
 * pushes to `/upstream-signals/<id>` or creates one with the events the
 * upstream is configured for, and asks for a verification with a fresh
 * `state`; the receiver marks the stream verified when that SET arrives.
 */
export function createUpstreamConnect(deps: { store: Store; receiver: UpstreamReceiver; upstreams: SignalUpstream[] }) {
  const tokens = clientCredentialsTokens();
  const key = (id: string) => deps.receiver.keys.stream(id);

  async function call(url: string, credentials: ClientCredentials, method: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(url, {
      method, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { accept: 'application/json', authorization: `Bearer ${await tokens.get(credentials)}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status === 401) tokens.forget(credentials);
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) as unknown : undefined };
  }

  return {
    async connect(upstreamId: string, issuer: string): Promise<UpstreamStream> {
      const upstream = deps.upstreams.find((u) => u.id === upstreamId);
      if (!upstream?.stream || !upstream.configurationUrl) throw new TypeError(`oidc-signout-notify: upstream "${upstreamId}" has no stream credentials or configurationUrl`);
      const credentials = upstream.stream;
      const res = await fetch(upstream.configurationUrl, { redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS), headers: { accept: 'application/json' } });
      const metadata = await res.json() as { issuer?: unknown; configuration_endpoint?: unknown; verification_endpoint?: unknown };
      if (metadata.issuer !== upstream.issuer || typeof metadata.configuration_endpoint !== 'string') throw new Error('the upstream\'s ssf-configuration names another issuer or no configuration_endpoint');
      const endpointUrl = `${issuer.replace(/\/+$/, '')}/upstream-signals/${upstream.id}`;
      const listed = await call(metadata.configuration_endpoint, credentials, 'GET');
      const streams = (Array.isArray(listed.json) ? listed.json : listed.json ? [listed.json] : []) as { stream_id?: unknown; delivery?: { method?: unknown; endpoint_url?: unknown } }[];
      const ours = listed.status === 200 ? streams.find((s) => s.delivery?.method === 'urn:ietf:rfc:8935' && s.delivery.endpoint_url === endpointUrl) : undefined;
      let streamId = typeof ours?.stream_id === 'string' ? ours.stream_id : undefined;
      const how = streamId ? 'adopted' : 'created';
      if (!streamId) {
        const created = await call(metadata.configuration_endpoint, credentials, 'POST', {
          events_requested: upstream.events, delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: endpointUrl },
        });
        const id = (created.json as { stream_id?: unknown } | undefined)?.stream_id;
        if (created.status !== 201 || typeof id !== 'string') throw new Error(`the upstream did not create the stream (${created.status})`);
        streamId = id;
      }
      const state = randomId();
      const [previous] = await deps.store.hmget(key(upstream.id), ['state']);
      const stream: UpstreamStream = { stream_id: streamId, endpoint_url: endpointUrl, how, connectedAt: Date.now() };
      // Kept before asking (the upstream may push the verification before it answers), with the last few asked:
      // a verification asked before still counts when it arrives.
      const states = [state, ...(previous ?? '').split(' ').filter(Boolean)].slice(0, 5).join(' ');
      await deps.store.run(commands.hset(), [key(upstream.id)], ['stream', JSON.stringify(stream), 'state', states]);
      if (typeof metadata.verification_endpoint === 'string') {
        const asked = await call(metadata.verification_endpoint, credentials, 'POST', { stream_id: streamId, state });
        // Asked too soon after the last one (SSF 1.0 min_verification_interval): the last one's state still counts.
        if (asked.status !== 204 && asked.status !== 200 && !(asked.status === 429 && previous)) throw new Error(`the upstream refused the verification (${asked.status})`);
      }
      return stream;
    },

    /** The stream as connect() left it, verified once the upstream's verification arrived. */
    async stream(upstreamId: string): Promise<UpstreamStream | undefined> {
      const [stream, verifiedAt] = await deps.store.hmget(key(upstreamId), ['stream', 'verifiedAt']);
      return stream ? { ...JSON.parse(stream) as UpstreamStream, ...(verifiedAt ? { verifiedAt: Number(verifiedAt) } : {}) } : undefined;
    },
  };
}
