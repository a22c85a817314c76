import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Organizations } from '../orgs/organizations.ts';
import type { LastUsed } from '../sites/last-used.ts';

type Client = KoaContextWithOIDC['oidc']['client'] & object;
interface PresentedToken {
  clientId?: string | undefined;
  accountId?: string | undefined;
  destroy(): Promise<void>;
}

/**
 * features.introspection.allowedPolicy: a client learns about its own tokens
 * only; any other token is `{ "active": false }` (RFC 7662 lets the server
 * decide what a caller may see). A token of a person who is no longer a
 * member of the organization owning the client is inactive too. A site
 * introspecting its own active token uses its access ("Last used").
 */
export function introspectionAllowedPolicy(orgs: Organizations, lastUsed: LastUsed) {
  // Not async: a site of no organization (most) is answered without a promise of the plugin's.
  return (_ctx: KoaContextWithOIDC, client: Client, token: PresentedToken): boolean | Promise<boolean> => {
    const { accountId } = token;
    if (token.clientId !== client.clientId) return false;
    if (!accountId) return true;
    if (orgs.ofClient(client.clientId).length === 0) {
      lastUsed.record(accountId, client.clientId);
      return true;
    }
    return orgs.mayUse(accountId, client.clientId).then((member) => {
      if (member) lastUsed.record(accountId, client.clientId);
      return member;
    });
  };
}

/**
 * features.revocation.allowedPolicy: revokes the presented token and nothing
 * else. oidc-provider would go on to revoke every token of the grant; doing
 * the work here and answering `false` stops it there. Another client's token
 * is left alone and the answer is still 200 (RFC 7009 section 2.2).
 */
export async function revocationAllowedPolicy(_ctx: KoaContextWithOIDC, client: Client, token: PresentedToken): Promise<boolean> {
  if (token.clientId === client.clientId) await token.destroy();
  return false;
}
