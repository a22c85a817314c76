import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

type Client = NonNullable<KoaContextWithOIDC['oidc']['client']>;

/**
 * The `sub` a site sees for an account: the pairwise identifier for pairwise
 * clients, computed by the provider's own Claims model so the host's
 * `pairwiseIdentifier` (or oidc-provider's default) decides, exactly as in
 * the ID token.
 */
export async function subjectFor(provider: Provider, ctx: KoaContextWithOIDC | undefined, accountId: string, client: Client): Promise<string> {
  if (client.subjectType !== 'pairwise') return accountId;
  const claims = new provider.Claims({ sub: accountId }, { ctx: ctx as KoaContextWithOIDC, client });
  claims.mask({ sub: null });
  const { sub } = await claims.result() as { sub?: string };
  return sub ?? accountId;
}
