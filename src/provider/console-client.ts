import type { Adapter, AdapterPayload, Configuration, KoaContextWithOIDC } from 'oidc-provider';

import { CONSOLE_CALLBACK, CONSOLE_CLIENT_ID } from '../console-client.ts';

function metadata(issuer: string, serviceName: string): AdapterPayload {
  const base = issuer.replace(/\/$/, '');
  return {
    client_id: CONSOLE_CLIENT_ID,
    client_name: serviceName,
    application_type: 'web',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [`${base}${CONSOLE_CALLBACK}`],
  } as AdapterPayload;
}

/**
 * oidc-provider finds clients that are not in `clients` through the
 * adapter's Client model: the console client is answered there, with its
 * redirect URI built from the issuer once the plugin is attached.
 */
export function withConsoleClient(factory: (model: string) => Adapter, issuer: () => string | undefined, serviceName: string) {
  return (model: string): Adapter => {
    const base = factory(model);
    if (model !== 'Client') return base;
    return Object.assign(Object.create(base) as Adapter, {
      async find(id: string) {
        const at = issuer();
        if (id === CONSOLE_CLIENT_ID && at) return metadata(at, serviceName);
        return base.find(id);
      },
    });
  };
}

type LoadExistingGrant = NonNullable<Configuration['loadExistingGrant']>;

/** loadExistingGrant: the console gets `openid` without a consent page; every other client as the host decides. */
export function consoleGrant(host: LoadExistingGrant | undefined): LoadExistingGrant {
  return async (ctx: KoaContextWithOIDC) => {
    const { client, session } = ctx.oidc;
    if (client?.clientId === CONSOLE_CLIENT_ID && session?.accountId) {
      const existing = session.grantIdFor(CONSOLE_CLIENT_ID);
      const found = existing ? await ctx.oidc.provider.Grant.find(existing) : undefined;
      if (found) return found;
      const grant = new ctx.oidc.provider.Grant({ clientId: CONSOLE_CLIENT_ID, accountId: session.accountId });
      grant.addOIDCScope('openid');
      await grant.save();
      return grant;
    }
    if (host) return host(ctx);
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  };
}
