/**
 * What oidc-provider's objects have and @types/oidc-provider leaves out, named
 * once: the rest of the plugin calls these instead of casting.
 */
import type Provider from 'oidc-provider';

type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/** A client's secret checks (lib/models/client.js), constant-time as oidc-provider does them. */
export function clientSecrets(client: Client): { compare(secret: string): Promise<boolean>; checkExpiration(message: string): void } {
  const c = client as unknown as { compareClientSecret(s: string): Promise<boolean>; checkClientSecretExpiration(m: string): void };
  return { compare: (secret) => c.compareClientSecret(secret), checkExpiration: (message) => c.checkClientSecretExpiration(message) };
}

/** Client#backchannelLogout: signs and sends a logout token with the provider's keys (pairwise sub included). */
export function backchannelLogoutOf(client: Client): (sub: string, sid?: string) => Promise<void> {
  const c = client as unknown as { backchannelLogout(sub: string, sid?: string): Promise<void> };
  return c.backchannelLogout.bind(client);
}

/** What a service session holds that the plugin reads (oidc-provider's Session). */
export interface ServiceSessionRecord {
  uid: string;
  accountId?: string;
  exp?: number;
  authorizations?: Record<string, { sid?: string; grantId?: string; persistsLogout?: boolean }>;
  destroy(): Promise<void>;
}

/** A session by its uid, as the plugin reads it. */
export async function sessionByUid(provider: Provider, uid: string): Promise<ServiceSessionRecord | undefined> {
  return await provider.Session.findByUid(uid) as unknown as ServiceSessionRecord | undefined;
}
