import type Provider from 'oidc-provider';
import { serviceSession, type HttpContext } from '../http/context.ts';

/** The account of the service session (oidc-provider's session cookie), if someone is signed in. */
export async function signedInAccount(provider: Provider, ctx: HttpContext): Promise<string | undefined> {
  const session = await serviceSession(provider, ctx);
  return session.accountId ?? undefined;
}
