import { claim, hsetnx, putTtl, type Store } from '../../src/store-kit.ts';
import { passkeyUse, recordUpdate, release, takeRecord } from './sign-in-method-scripts.ts';
import { digest, methodKeys, removeMethod, type RemoveResult } from './sign-in-methods.ts';

/** A passkey as the account keeps it (WebAuthn Level 3 "credential record"). */
export interface Passkey {
  /** Credential id, base64url. */
  id: string;
  /** COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter as last seen (0: it keeps none). */
  counter: number;
  transports: string[];
  /** The person's name for it ("Work laptop"). */
  name: string;
  createdAt: number;
  lastUsedAt?: number | undefined;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
}

/** A pending WebAuthn ceremony: its challenge, and what it was for. */
export interface Challenge {
  challenge: string;
  /** 'sign-in' (an interaction), 'sign-up' (an interaction, a new account) or 'add' (the console). */
  purpose: 'sign-in' | 'sign-up' | 'add';
  /** The account a sign-up creates, or the console's person. */
  accountId?: string | undefined;
  /** The name a sign-up gave, or the new passkey's. */
  name?: string | undefined;
}

/** How long a challenge can be answered: the ceremony's timeout, and a little more. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Passkeys per account: enough for every device a person owns, not a table to fill. */
export const MAX_PASSKEYS = 20;

type Stored = Omit<Passkey, 'id' | 'transports'> & { transports: string };

/**
 * The reference provider's passkeys. Persistent: `<prefix>account:{<id>}:passkeys`
 * (credential id -> JSON, read-modify-write in Lua only) and
 * `<prefix>passkey:{<sha256(credential id)>}` -> account id (who owns the
 * credential a sign-in presents). Challenges are single-use with a TTL:
 * `<prefix>passkey-challenge:{<interaction uid>}` for sign-in and sign-up,
 * `<prefix>account:{<id>}:passkey-challenge` for the console.
 */
export function createPasskeys(store: Store) {
  const p = store.prefix;
  const ownerKey = (credentialId: string) => `${p}passkey:{${digest(credentialId)}}`;
  const challengeKey = (binding: { uid: string } | { accountId: string }) =>
    'uid' in binding ? `${p}passkey-challenge:{${binding.uid}}` : `${methodKeys(p, binding.accountId).account}:passkey-challenge`;

  function parse(id: string, raw: string): Passkey {
    const s = JSON.parse(raw) as Stored;
    return { ...s, id, transports: s.transports ? s.transports.split(',') : [] };
  }

  async function list(accountId: string): Promise<Passkey[]> {
    const all = await store.hgetall(methodKeys(p, accountId).passkeys);
    return Object.entries(all).map(([id, raw]) => parse(id, raw)).sort((a, b) => a.createdAt - b.createdAt);
  }

  return {
    list,

    /** The account and stored passkey for a credential a sign-in presents; undefined for one nobody has. */
    async find(credentialId: string): Promise<{ accountId: string; passkey: Passkey } | undefined> {
      const accountId = await store.get(ownerKey(credentialId));
      if (!accountId) return undefined;
      const [raw] = await store.hmget(methodKeys(p, accountId).passkeys, [credentialId]);
      return raw ? { accountId, passkey: parse(credentialId, raw) } : undefined;
    },

    /**
     * Keeps a new passkey. False when the credential is someone's already
     * (an authenticator never makes the same id twice: a replayed registration).
     */
    async add(accountId: string, passkey: Passkey): Promise<boolean> {
      const owner = (await store.run(claim(), [ownerKey(passkey.id)], [accountId])) as string;
      if (owner !== accountId) return false;
      const { id, transports, ...rest } = passkey;
      const stored: Stored = { ...rest, transports: transports.join(',') };
      const added = (await store.run(hsetnx(), [methodKeys(p, accountId).passkeys], [id, JSON.stringify(stored)])) === 1;
      return added;
    },

    /** A sign-in used it: the counter moves forward or the sign-in is refused ('counter': a cloned authenticator). */
    async use(accountId: string, credentialId: string, counter: number, backedUp: boolean): Promise<'ok' | 'missing' | 'counter'> {
      return (await store.run(passkeyUse(), [methodKeys(p, accountId).passkeys], [credentialId, counter, Date.now(), String(backedUp)])) as 'ok' | 'missing' | 'counter';
    },

    async rename(accountId: string, credentialId: string, name: string): Promise<boolean> {
      return (await store.run(recordUpdate(), [methodKeys(p, accountId).passkeys], [credentialId, 'name', JSON.stringify(name)])) === 1;
    },

    /** Removes it unless it is the account's last way in. */
    async remove(accountId: string, credentialId: string): Promise<RemoveResult> {
      const result = await removeMethod(store, accountId, 'passkey', credentialId);
      if ('removed' in result) await store.run(release(), [ownerKey(credentialId)], [accountId]);
      return result;
    },

    /** Keeps the challenge of a ceremony for its binding, replacing an earlier one. */
    async putChallenge(binding: { uid: string } | { accountId: string }, challenge: Challenge): Promise<void> {
      const fields = Object.entries(challenge).filter(([, v]) => v !== undefined).flat() as string[];
      await store.run(putTtl(), [challengeKey(binding)], [CHALLENGE_TTL_MS, ...fields]);
    },

    /** Takes the binding's challenge: it answers one ceremony only. */
    async takeChallenge(binding: { uid: string } | { accountId: string }): Promise<Challenge | undefined> {
      return (await takeRecord(store, challengeKey(binding))) as unknown as Challenge | undefined;
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
