// The TypeScript host's own app: the same parts as host/your-app.js, typed
// as a strict TypeScript host types them. Only compiled (tsc --noEmit).
import { createPrivateKey, type JsonWebKey } from 'node:crypto';

import type { ClientMetadata, Configuration, FindAccount, JWK } from 'oidc-provider';

interface Person { email: string; locale: string }

const people = new Map<string, Person>([['alice', { email: 'alice@example.com', locale: 'en' }]]);

export const users = {
  async byId(id: string): Promise<Person | undefined> {
    return people.get(id);
  },
};

export const clients: ClientMetadata[] = JSON.parse(process.env.HOST_CLIENTS ?? '[]') as ClientMetadata[];

const key: JsonWebKey = createPrivateKey(process.env.HOST_SIGNING_KEY ?? '').export({ format: 'jwk' });
export const jwks: { keys: JWK[] } = { keys: [{ ...key, kid: 'host-1', use: 'sig', alg: 'RS256' } as JWK] };

export const cookies: Configuration['cookies'] = { keys: [process.env.HOST_COOKIE_KEY ?? 'dev-cookie-key'] };

export const findAccount: FindAccount = async (_ctx, id) => {
  const person = people.get(id);
  return person && { accountId: id, claims: () => ({ sub: id, email: person.email }) };
};

export const interactions: Configuration['interactions'] = { url: (_ctx, interaction) => `/interaction/${interaction.uid}` };

export const features: Configuration['features'] = { claimsParameter: { enabled: true } };
export const claims: Configuration['claims'] = { email: ['email', 'email_verified'] };
export const ttl: Configuration['ttl'] = { AccessToken: 600 };
