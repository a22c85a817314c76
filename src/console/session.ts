import type { Context } from 'koa';
import type Provider from 'oidc-provider';

/** The account of the service session (oidc-provider's session cookie), if someone is signed in. */
export async function signedInAccount(provider: Provider, ctx: Context): Promise<string | undefined> {
  const session = await provider.Session.get(ctx as never);
  return session.accountId ?? undefined;
}
