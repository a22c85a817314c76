/**
 * The OpenAPI 3.1 document of what a site calls beyond OpenID Connect,
 * generated from the zod schemas the routes validate with (zod-openapi).
 * Loaded only to generate it: by scripts/build.ts (dist/openapi.json, which
 * the package ships and serves), by the tests, and by the route when run from
 * the sources. zod-openapi is a devDependency (docs/choices.md); nothing the
 * package runs imports this folder (.dependency-cruiser.cjs).
 */
import { readFileSync } from 'node:fs';

import { createDocument, type ZodOpenApiComponentsObject, type ZodOpenApiPathsObject } from 'zod-openapi';

import { notificationResult } from '../notify/answers.ts';
import { notificationRequest } from '../notify/read-request.ts';
import { notifyOperation } from './notify.ts';
import { SSF_OPENAPI_PATHS } from './ssf.ts';
import { UPSTREAM_SIGNALS_OPENAPI_PATHS } from './upstream-signals.ts';

/** Every path the document describes, and its operations: a route a site calls is added here (docs/api.md). */
export const PATHS: ZodOpenApiPathsObject = {
  '/api/notify': { post: notifyOperation },
  ...SSF_OPENAPI_PATHS,
  ...UPSTREAM_SIGNALS_OPENAPI_PATHS,
};

/** Schemas named in the document (a `$ref` wherever they are used), and how a site authenticates. */
const COMPONENTS: ZodOpenApiComponentsObject = {
  schemas: {
    NotificationRequest: notificationRequest,
    NotificationResult: notificationResult,
  },
  securitySchemes: {
    ssfBearer: {
      type: 'oauth2',
      description: 'A Shared Signals receiver\'s access token (RFC 6750, in the Authorization header only): a registered '
        + 'confidential site gets one by the client credentials grant at the token endpoint, with scope ssf.manage (to change '
        + 'its stream) or ssf.read (to read it and poll).',
      flows: { clientCredentials: { tokenUrl: '/token', scopes: { 'ssf.manage': 'Create, change and delete the site\'s stream, verify it', 'ssf.read': 'Read the site\'s stream and its status, poll' } } },
    },
    gtrBearer: {
      type: 'oauth2',
      description: 'Global Token Revocation\'s caller (an enterprise identity provider, an incident tool): a confidential client that '
        + 'upstreamSignals.globalTokenRevocation.clients lists, with an access token of the client credentials grant carrying the scope.',
      flows: { clientCredentials: { tokenUrl: '/token', scopes: { global_token_revocation: 'End every way in of a person' } } },
    },
    clientSecretBasic: {
      type: 'http',
      scheme: 'basic',
      description: 'The site\'s client_id and client_secret, each form-urlencoded (RFC 6749 section 2.3.1 and appendix B), '
        + 'as the Basic user and password. Confidential sites only (client_secret_basic or client_secret_post: either sends '
        + 'them this way here); a public site, an unknown one, a wrong or expired secret get 401 invalid_client.',
    },
  },
};

export function openApiDocument(): ReturnType<typeof createDocument> {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return createDocument({
    openapi: '3.1.1',
    info: {
      title: 'oidc-signout-notify: what a site calls beyond OpenID Connect',
      version,
      description: 'The routes a relying site calls on an identity provider running oidc-signout-notify, besides those '
        + 'OpenID Connect discovery names. Paths are relative to the provider\'s issuer.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    paths: PATHS,
    components: COMPONENTS,
  });
}

/** The document as the package ships and serves it; the same sources give the same bytes (no time, no machine in it). */
export function openApiJson(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
