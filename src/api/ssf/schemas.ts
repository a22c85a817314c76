import { z } from 'zod';

const PUSH = 'urn:ietf:rfc:8935';
const POLL = 'urn:ietf:rfc:8936';

const uri = z.string().min(1).max(512);
const streamId = z.string().min(1).max(64).meta({ description: 'The stream\'s id, as its creation answered it.' });

/*
 * A stream's configuration ignores the members it does not know (not kept,
 * not shown back): older receivers send `format`, and SSF lets a delivery
 * method have parameters of its own. The other bodies stay strict.
 */

/** The delivery a receiver asks for (SSF 1.0 section 8.1.1): push to its endpoint, or poll ours. */
export const deliveryRequest = z.object({
  method: z.enum([PUSH, POLL]),
  endpoint_url: z.url({ protocol: /^https?$/ }).max(2048).optional(),
  authorization_header: z.string().min(1).max(4096).regex(/^[\x20-\x7e]+$/, 'printable ASCII only').optional()
    .meta({ description: 'Push only: sent as the Authorization header of every push; never shown back.' }),
});

// What the transmitter sets; a receiver may send them back (PUT of a stream it read), they are ignored.
const transmitterFields = {
  iss: z.string().optional(),
  aud: z.union([z.string(), z.array(z.string())]).optional(),
  events_supported: z.array(z.string()).optional(),
  events_delivered: z.array(z.string()).optional(),
  inactivity_timeout: z.number().optional(),
};

const settings = {
  events_requested: z.array(uri).max(32).optional(),
  delivery: deliveryRequest.optional(),
  description: z.string().max(256).optional(),
  min_verification_interval: z.number().int().min(30).max(86_400).optional()
    .meta({ description: 'Seconds between two verification requests; at least 30 (the default).' }),
};

/** POST /ssf/stream: a new stream. */
export const streamCreateRequest = z.object({ ...transmitterFields, ...settings });
/** PATCH and PUT /ssf/stream: the stream's id and what changes (PATCH) or everything (PUT). */
export const streamUpdateRequest = z.object({ stream_id: streamId, ...transmitterFields, ...settings });

export const streamStatusRequest = z.object({
  stream_id: streamId,
  status: z.enum(['enabled', 'paused', 'disabled']),
  reason: z.string().max(256).optional(),
}).strict();

export const verificationRequest = z.object({ stream_id: streamId, state: z.string().max(256).optional() }).strict();

/** The most SETs one poll returns, whatever it asks for (RFC 8936 section 2.2: maxEvents is an upper bound). */
export const POLL_MAX_EVENTS = 100;

/** RFC 8936 section 2.2: the receiver's poll. */
export const pollRequest = z.object({
  maxEvents: z.number().int().min(0).optional()
    .meta({ description: `At most this many SETs (0: acknowledge only); absent or above ${POLL_MAX_EVENTS}, ${POLL_MAX_EVENTS}.` }),
  returnImmediately: z.boolean().optional(),
  ack: z.array(z.string().max(64)).max(100).optional(),
  setErrs: z.record(z.string().max(64), z.object({ err: z.string().max(64), description: z.string().max(256).optional() })).optional(),
}).strict();

export const streamConfiguration = z.object({
  stream_id: z.string(),
  iss: z.string(),
  aud: z.string(),
  events_supported: z.array(z.string()),
  events_requested: z.array(z.string()),
  events_delivered: z.array(z.string()),
  delivery: z.object({ method: z.enum([PUSH, POLL]), endpoint_url: z.string().optional() }),
  description: z.string().optional(),
  min_verification_interval: z.number().int(),
});

export const streamStatus = z.object({ stream_id: z.string(), status: z.enum(['enabled', 'paused', 'disabled']), reason: z.string().optional() });

export const pollResponse = z.object({ sets: z.record(z.string(), z.string()), moreAvailable: z.boolean() });

export const ssfConfiguration = z.object({
  spec_version: z.literal('1_0'),
  issuer: z.string(),
  jwks_uri: z.string(),
  configuration_endpoint: z.string(),
  status_endpoint: z.string(),
  verification_endpoint: z.string(),
  delivery_methods_supported: z.array(z.string()),
  authorization_schemes: z.array(z.object({ spec_urn: z.string() })),
  default_subjects: z.enum(['ALL', 'NONE']),
});
