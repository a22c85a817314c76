import { errors } from 'oidc-provider';

import { PluginError } from '../../http/errors.ts';
import { DEFAULT_EVENT_TYPES, supportedFor } from '../../ssf/event-types.ts';
import { refusedEndpoint } from '../../ssf/push.ts';
import { DEFAULT_MIN_VERIFICATION_INTERVAL, POLL, PUSH, type Stream, type StreamSettings } from '../../ssf/streams.ts';
import { SSF_PATHS } from './configuration.ts';

/** A stream as the receiver reads it (SSF 1.0 section 8.1.1); the authorization header is never shown back. */
export function streamAnswer(issuer: string, stream: Stream) {
  const supported = supportedFor(stream.events_requested, issuer);
  return {
    stream_id: stream.stream_id,
    iss: issuer,
    aud: stream.clientId,
    events_supported: supported,
    events_requested: stream.events_requested,
    events_delivered: stream.events_requested.filter((type) => supported.includes(type)),
    delivery: { method: stream.delivery.method, ...(stream.delivery.endpoint_url ? { endpoint_url: stream.delivery.endpoint_url } : {}) },
    ...(stream.description !== undefined ? { description: stream.description } : {}),
    min_verification_interval: stream.min_verification_interval,
  };
}

/** 404 for a stream id that is not the site's stream's. */
export const unknownStream = () => new PluginError('not_found', 'no such stream');

type Asked = {
  events_requested?: string[] | undefined;
  delivery?: { method: string; endpoint_url?: string | undefined; authorization_header?: string | undefined } | undefined;
  description?: string | undefined;
  min_verification_interval?: number | undefined;
};

/**
 * The settings a create, update or replace asks for, on top of `base` (an
 * update's stream; nothing for a create or replace). Push needs the
 * receiver's endpoint, as push.ts refusedEndpoint allows it (each push is
 * checked again where the name resolves); poll's endpoint is the service's own.
 */
export function settingsFrom(issuer: string, asked: Asked, base: StreamSettings | undefined, privateHosts: ReadonlySet<string>): StreamSettings {
  const delivery = asked.delivery ?? base?.delivery ?? { method: POLL };
  let settled: StreamSettings['delivery'];
  if (delivery.method === PUSH) {
    if (!delivery.endpoint_url) throw new errors.InvalidRequest('delivery.endpoint_url: is required for push delivery');
    const url = new URL(delivery.endpoint_url);
    const refused = refusedEndpoint(url, privateHosts);
    if (refused) throw new errors.InvalidRequest(`delivery.endpoint_url: ${refused}`);
    settled = { method: PUSH, endpoint_url: url.href, ...(delivery.authorization_header ? { authorization_header: delivery.authorization_header } : {}) };
  } else {
    if (delivery.authorization_header) throw new errors.InvalidRequest('delivery.authorization_header: only for push delivery');
    settled = { method: POLL, endpoint_url: `${issuer}${SSF_PATHS.poll}` };
  }
  const description = asked.description ?? base?.description;
  return {
    // Without events_requested (a create, or a replace that deletes it): the standard events the service sends.
    events_requested: asked.events_requested ?? base?.events_requested ?? [...DEFAULT_EVENT_TYPES],
    delivery: settled,
    ...(description !== undefined ? { description } : {}),
    min_verification_interval: asked.min_verification_interval ?? base?.min_verification_interval ?? DEFAULT_MIN_VERIFICATION_INTERVAL,
  };
}
