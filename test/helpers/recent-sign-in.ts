/**
 * Time for the recent sign-in's tests without waiting: the stored service
 * session's sign-in time (oidc-provider's `loginTs`, what `auth_time` and the
 * plugin's check read) moved back in the store, as if that long had passed
 * since the sign-in. The session is read and saved through the provider's
 * own model and the plugin's adapter, as every request reads it; nothing in
 * the package is there for tests.
 */
import type Provider from 'oidc-provider';

import type { Agent } from './agent.ts';

/** The session cookie's value (the stored session's id) in an agent's jar for the issuer. */
export function sessionCookie(agent: Agent, issuer: string): string {
  const value = agent.cookies.get(new URL(issuer).host)?.get('_session');
  if (!value) throw new Error('the agent has no session cookie');
  return value;
}

/** Moves the sign-in of the session behind `cookie` back by `seconds`; returns its new auth time. */
export async function signedInAgo(provider: Provider, cookie: string, seconds: number): Promise<number> {
  const session = await provider.Session.find(cookie);
  if (!session?.loginTs) throw new Error('no signed-in session for that cookie');
  session.loginTs = Math.floor(Date.now() / 1000) - seconds;
  await session.persist();
  return session.loginTs;
}

/** The auth time (epoch seconds) of the session behind `cookie`. */
export async function authTimeOf(provider: Provider, cookie: string): Promise<number | undefined> {
  return (await provider.Session.find(cookie))?.authTime();
}
