import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { PluginError } from '../../http/errors.ts';

export const SSF_MANAGE = 'ssf.manage';
export const SSF_READ = 'ssf.read';

/** What the bearer step found: the site (a confidential client). */
export interface SsfState {
  clientId: string;
}

const challenge = (error?: string, scope?: string) => `Bearer realm="ssf"${error ? `, error="${error}"` : ''}${scope ? `, scope="${scope}"` : ''}`;
const invalidToken = (description: string, withError = true) => Object.assign(new PluginError('invalid_token', description), { wwwAuthenticate: challenge(withError ? 'invalid_token' : undefined) });

type TokenLike = { clientId?: string; scope?: string; isValid?: boolean; isExpired?: boolean };

/**
 * The receiver's access token (RFC 6750, in the Authorization header only,
 * never the query): a client-credentials token the provider issued, found by
 * its own model, unexpired, of a confidential site, with one of the scopes
 * the route needs (`ssf.manage` for changes), which the site's `scope`
 * metadata lists. A person's access token is
 * never one, whatever its scopes: it travels to the site's resource servers,
 * and whoever holds it must not pause or repoint the stream through which
 * the site hears of every loss of access.
 */
export function bearer(provider: Provider, scopes: readonly string[]): Middleware<SsfState> {
  return async (ctx, next) => {
    const match = /^Bearer ([\x21-\x7e]+)$/i.exec(ctx.get('authorization').trim());
    if (!match) throw invalidToken('a Bearer access token is required', false);
    const value = match[1]!;
    const found = await provider.ClientCredentials.find(value).catch(() => undefined) as TokenLike | undefined;
    if (!found?.clientId || found.isValid === false || found.isExpired) throw invalidToken('the access token is not valid');
    const client = await provider.Client.find(found.clientId).catch(() => undefined);
    if (!client || client.clientAuthMethod === 'none') throw invalidToken('the access token is not valid');
    // A scope counts only while the site's metadata still lists it (a token minted before its scope was taken away).
    const listed = new Set((client.scope ?? '').split(' '));
    const granted = new Set((found.scope ?? '').split(' ').filter((scope) => listed.has(scope)));
    if (!scopes.some((scope) => granted.has(scope))) {
      throw Object.assign(new PluginError('insufficient_scope', `the access token needs the scope ${scopes.join(' or ')}`), { wwwAuthenticate: challenge('insufficient_scope', scopes[0]) });
    }
    ctx.state.clientId = client.clientId;
    await next();
  };
}
