import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { PluginError } from '../../http/errors.ts';
import { clientSecrets } from '../../provider-types.ts';
import type { NotifyState } from './state.ts';

const invalidClient = (description: string) => Object.assign(
  new PluginError('invalid_client', description),
  { wwwAuthenticate: 'Basic realm="notify", charset="UTF-8"' },
);

/** RFC 6749 section 2.3.1 with appendix B: client_id and secret are form-encoded inside Basic. */
export function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
    return { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * Step 1: the site, by HTTP Basic (SPEC "Authentication"). Only confidential
 * clients: a registered secret method, a secret, not expired; the secret
 * compared in constant time by oidc-provider. Unknown and public clients get
 * the same answer as a wrong secret (client ids are not secret; secrets are).
 */
export function authenticateSite(provider: Provider): Middleware<NotifyState> {
  return async (ctx, next) => {
    const credentials = basicCredentials(ctx.get('authorization'));
    if (!credentials) throw invalidClient('HTTP Basic client authentication is required');
    const client = await provider.Client.find(credentials.id).catch(() => undefined);
    if (!client || !['client_secret_basic', 'client_secret_post'].includes(client.clientAuthMethod ?? '') || !client.clientSecret) {
      throw invalidClient('client authentication failed');
    }
    const secrets = clientSecrets(client);
    if (!(await secrets.compare(credentials.secret))) throw invalidClient('client authentication failed');
    try {
      secrets.checkExpiration('client secret expired');
    } catch {
      throw invalidClient('client secret expired');
    }
    ctx.state.client = client;
    await next();
  };
}
