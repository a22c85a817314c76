import type Provider from 'oidc-provider';

import { CLIENT_CREDENTIALS_LENGTH } from '../../adapters/keys.ts';

type Find = (value: unknown, ...rest: unknown[]) => Promise<unknown>;

/** One settled promise for every value that cannot be a client-credentials token: nothing to allocate per request. */
const NONE = Promise.resolve(undefined);

/**
 * With client credentials enabled (Shared Signals receivers), oidc-provider
 * looks every introspected or revoked value up as a client-credentials token
 * too, beside the access token (RFC 7662's hint is only a hint): an async
 * model find, the adapter's, and their promises on every request. Every
 * client-credentials token configure() issues is CLIENT_CREDENTIALS_LENGTH
 * characters long (adapters/keys.ts), and the adapter finds no other length
 * as one; a value of another length is answered "none" before the model.
 */
export function clientCredentialsByLength(provider: Provider): void {
  const model = provider.ClientCredentials as unknown as { find: Find };
  const find = model.find.bind(model);
  model.find = (value, ...rest) => (typeof value === 'string' && value.length !== CLIENT_CREDENTIALS_LENGTH ? NONE : find(value, ...rest));
}
