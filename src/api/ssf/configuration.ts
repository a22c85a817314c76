import type Provider from 'oidc-provider';

import { POLL, PUSH } from '../../ssf/streams.ts';

/** Where the transmitter's endpoints are, under the issuer (docs/shared-signals.md). */
export const SSF_PATHS = {
  configuration: '/.well-known/ssf-configuration',
  stream: '/ssf/stream',
  status: '/ssf/status',
  verify: '/ssf/verify',
  poll: '/ssf/poll',
} as const;

/**
 * The transmitter's metadata (SSF 1.0 section 7.1, with the CAEP
 * interoperability profile's MUSTs). default_subjects ALL: each receiver
 * hears of every person who has a grant with it, and of no one else
 * (docs/shared-signals.md says why).
 */
export function ssfConfiguration(provider: Provider) {
  const { issuer } = provider;
  const at = (path: string) => `${issuer}${path}`;
  return {
    spec_version: '1_0' as const,
    issuer,
    jwks_uri: provider.urlFor('jwks'),
    configuration_endpoint: at(SSF_PATHS.stream),
    status_endpoint: at(SSF_PATHS.status),
    verification_endpoint: at(SSF_PATHS.verify),
    delivery_methods_supported: [PUSH, POLL],
    authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
    default_subjects: 'ALL' as const,
  };
}
