/**
 * Tokens for the runs, made through oidc-provider's own models in the server
 * process (no browser sign-in thousands of times). Each token gets what the
 * real code flow gives it (docs/choices.md: without
 * offline_access tokens are bound to the service session):
 *
 *   Session { accountId, loginTs, authorizations: { bench-site: { sid, grantId } } }
 *   Grant   { accountId, clientId, openid email }
 *   token   { accountId, clientId, grantId, sessionUid, expiresWithSession, scope: 'openid email', gty }
 *
 * One session and one grant per token, as one sign-in each: then revoking
 * one token on B (whose revocation cascades to the grant, KNOWN-TRAPS item 3)
 * touches no other token of the run. The same code runs on A, B and C, with
 * the same accounts (a Map in each server).
 */
import { createHash, randomBytes } from 'node:crypto';

import type Provider from 'oidc-provider';

import { CLIENT, TTL } from './host.ts';

export const SCOPE = 'openid email';
export const REDIRECT_URI = CLIENT.redirect_uris![0]!;
/** One PKCE verifier for every code (S256); the server still hashes and compares it per exchange. */
export const CODE_VERIFIER = 'bench-pkce-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
const CODE_CHALLENGE = createHash('sha256').update(CODE_VERIFIER).digest('base64url');

export type TokenKind = 'access' | 'refresh' | 'code' | 'revoked-access';

/** Runs `work(i)` for i < count with at most `limit` in flight. */
export async function inParallel<T>(count: number, limit: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  return out;
}

export interface Minter {
  /** `count` tokens of a kind; values as the client would hold them. */
  mint(kind: TokenKind, count: number): Promise<string[]>;
  /** A grant (with its session) for an account, as one sign-in makes it. */
  signIn(accountId: string): Promise<{ grantId: string; sessionUid: string; loginTs: number }>;
  /** The accounts tokens are spread over. */
  readonly accountIds: string[];
}

/**
 * @param accountIds accounts that exist on this server (findAccount finds them)
 */
export async function createMinter(provider: Provider, accountIds: string[], concurrency = 64): Promise<Minter> {
  const client = await provider.Client.find(CLIENT.client_id);
  if (!client) throw new Error(`client ${CLIENT.client_id} not found`);
  let turn = 0;
  const nextAccount = () => accountIds[turn++ % accountIds.length]!;

  async function signIn(accountId: string) {
    const grant = new provider.Grant({ accountId, clientId: client!.clientId });
    grant.addOIDCScope(SCOPE);
    const grantId = await grant.save();
    const loginTs = Math.floor(Date.now() / 1000);
    // The typings say no argument; oidc-provider takes the payload (as when it reads one back).
    const SessionModel = provider.Session as unknown as new (payload: object) => InstanceType<typeof provider.Session>;
    const session = new SessionModel({
      accountId,
      loginTs,
      authorizations: { [client!.clientId]: { sid: randomBytes(16).toString('base64url'), grantId } },
    });
    await session.save(TTL.Session);
    return { grantId, sessionUid: session.uid, loginTs };
  }

  async function one(kind: TokenKind): Promise<string> {
    const accountId = nextAccount();
    const { grantId, sessionUid, loginTs } = await signIn(accountId);
    const common = { accountId, client: client!, grantId, sessionUid, expiresWithSession: true, scope: SCOPE };
    switch (kind) {
      case 'access':
      case 'revoked-access': {
        const token = new provider.AccessToken({ ...common, gty: 'authorization_code' });
        const value = await token.save();
        if (kind === 'revoked-access') await token.destroy();
        return value;
      }
      case 'refresh':
        return new provider.RefreshToken({ ...common, gty: 'authorization_code', authTime: loginTs, rotations: 0 }).save();
      case 'code':
        // The typings ask for a gty; the authorization endpoint sets none on codes.
        return new provider.AuthorizationCode({
          ...common,
          authTime: loginTs,
          redirectUri: REDIRECT_URI,
          codeChallenge: CODE_CHALLENGE,
          codeChallengeMethod: 'S256',
        } as ConstructorParameters<typeof provider.AuthorizationCode>[0]).save();
    }
  }

  return {
    accountIds,
    signIn,
    mint: (kind, count) => inParallel(count, concurrency, () => one(kind)),
  };
}
