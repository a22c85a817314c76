import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';

import type { ErrorName } from '../../http/error-codes.ts';
import { SSF_PATHS } from '../ssf/configuration.ts';
import {
  pollRequest, pollResponse, ssfConfiguration, streamConfiguration, streamCreateRequest, streamStatus,
  streamStatusRequest, streamUpdateRequest, verificationRequest,
} from '../ssf/schemas.ts';
import { errorResponses } from './responses.ts';

const bearerChallenge = z.string().regex(/^Bearer /).meta({ description: 'The scheme to authenticate with (RFC 6750 section 3).', example: 'Bearer realm="ssf", error="invalid_token"' });
const challenges = { invalid_token: { 'WWW-Authenticate': bearerChallenge }, insufficient_scope: { 'WWW-Authenticate': bearerChallenge } };
const errors = (names: ErrorName[]) => errorResponses(['invalid_token', 'insufficient_scope', 'temporarily_unavailable', 'server_error', ...names], challenges);
const streamIdQuery = z.object({ stream_id: z.string().optional().meta({ description: 'The stream\'s id (the site has one stream at most).' }) });
const manage = [{ ssfBearer: ['ssf.manage'] }];
const read = [{ ssfBearer: ['ssf.read'] }, { ssfBearer: ['ssf.manage'] }];
const json = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } } });

const streamAnswer = (description: string) => ({ description, ...json(streamConfiguration) });

const streamOps: Record<'get' | 'post' | 'patch' | 'put' | 'delete', ZodOpenApiOperationObject> = {
  post: {
    operationId: 'ssfCreateStream', summary: 'Create the site\'s stream', security: manage,
    requestBody: { required: true, ...json(streamCreateRequest) },
    responses: { 201: streamAnswer('The stream, created.'), ...errors(['invalid_request', 'stream_exists']) },
  },
  get: {
    operationId: 'ssfReadStream', summary: 'Read the site\'s stream (by id), or the list of its streams (none or one)', security: read,
    requestParams: { query: streamIdQuery },
    responses: { 200: { description: 'The stream; without stream_id, the list.', ...json(z.union([streamConfiguration, z.array(streamConfiguration)])) }, ...errors(['not_found']) },
  },
  patch: {
    operationId: 'ssfUpdateStream', summary: 'Change some of the stream\'s settings', security: manage,
    requestBody: { required: true, ...json(streamUpdateRequest) },
    responses: { 200: streamAnswer('The stream as changed.'), ...errors(['invalid_request', 'not_found']) },
  },
  put: {
    operationId: 'ssfReplaceStream', summary: 'Replace the stream\'s settings', security: manage,
    requestBody: { required: true, ...json(streamUpdateRequest) },
    responses: { 200: streamAnswer('The stream as replaced.'), ...errors(['invalid_request', 'not_found']) },
  },
  delete: {
    operationId: 'ssfDeleteStream', summary: 'Delete the stream and every event kept for it', security: manage,
    requestParams: { query: streamIdQuery },
    responses: { 204: { description: 'Deleted.' }, ...errors(['invalid_request', 'not_found']) },
  },
};

/** The Shared Signals transmitter's paths (SSF 1.0, RFC 8936), from the schemas its routes validate with. */
export const SSF_OPENAPI_PATHS: ZodOpenApiPathsObject = {
  [SSF_PATHS.configuration]: {
    get: {
      operationId: 'ssfConfiguration', summary: 'The transmitter\'s metadata (SSF 1.0 section 7.1)',
      responses: { 200: { description: 'The metadata.', ...json(ssfConfiguration) } },
    },
  },
  [SSF_PATHS.stream]: streamOps,
  [SSF_PATHS.status]: {
    get: {
      operationId: 'ssfReadStatus', summary: 'The stream\'s status', security: read,
      requestParams: { query: streamIdQuery },
      responses: { 200: { description: 'The status.', ...json(streamStatus) }, ...errors(['not_found']) },
    },
    post: {
      operationId: 'ssfUpdateStatus', summary: 'Enable, pause (events are held) or disable (events are dropped) the stream', security: manage,
      requestBody: { required: true, ...json(streamStatusRequest) },
      responses: { 200: { description: 'The status as set.', ...json(streamStatus) }, ...errors(['invalid_request', 'not_found']) },
    },
  },
  [SSF_PATHS.verify]: {
    post: {
      operationId: 'ssfVerify', summary: 'Ask for a verification event with the given state', security: manage,
      requestBody: { required: true, ...json(verificationRequest) },
      responses: { 204: { description: 'A verification SET is on its way.' }, ...errors(['invalid_request', 'not_found', 'rate_limited']) },
    },
  },
  [SSF_PATHS.poll]: {
    post: {
      operationId: 'ssfPoll', summary: 'Acknowledge SETs and fetch the next ones (RFC 8936); at most 60 polls a minute per site', security: read,
      requestBody: { required: true, ...json(pollRequest) },
      responses: { 200: { description: 'The SETs waiting, by jti: at most maxEvents, and never more than 100.', ...json(pollResponse) }, ...errors(['invalid_request', 'not_found', 'rate_limited']) },
    },
  },
};
