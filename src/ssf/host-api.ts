import type { SsfQueue } from './set-queue.ts';
import type { Transmitter } from './transmitter.ts';

/** Which credential changed (CAEP 1.0 credential-change `credential_type`; `federated` is the service's own, for a linked account). */
export type CredentialType = 'password' | 'pin' | 'x509' | 'fido2-platform' | 'fido2-roaming' | 'fido-u2f' | 'verifiable-credential' | 'phone-voice' | 'phone-sms' | 'app' | 'federated';

export interface CredentialChange {
  /** What happened: a passkey added or removed, an account of another provider linked or unlinked. */
  change: 'passkey_added' | 'passkey_removed' | 'account_linked' | 'account_unlinked';
  /** Defaults: fido2-platform for passkeys, federated for linked accounts. */
  credentialType?: CredentialType | undefined;
  /** The passkey's authenticator model (CAEP `fido2_aaguid`). */
  aaguid?: string | undefined;
  /** The passkey's or linked account's name (CAEP `friendly_name`). */
  friendlyName?: string | undefined;
}

/**
 * What a host tells the person's sites through Shared Signals
 * (`plugin.sharedSignals`, docs/shared-signals.md). Each call queues one
 * cause (one txn) and resolves once it is stored; every site the person is
 * connected to whose stream asks for the event gets one SET.
 */
export interface SharedSignals {
  /** CAEP credential-change: a passkey added or removed, an account linked or unlinked. */
  credentialChange(accountId: string, change: CredentialChange): Promise<void>;
  /** RISC account-disabled. */
  accountDisabled(accountId: string, options?: { reason?: 'hijacking' | 'bulk-account' | undefined }): Promise<void>;
  /**
   * RISC account-purged: the account is deleted (plugin.deleteAccount calls
   * it). The sites and their subjects are read before it resolves, so the
   * person's records may be erased right after.
   */
  accountPurged(accountId: string): Promise<void>;
  /** RISC identifier-changed: the person's address changed (the new value is not sent: the site may never have had it). */
  identifierChanged(accountId: string): Promise<void>;
  /** Causes and SETs not delivered yet (queued, waiting for a retry, being sent): for metrics. */
  pending(): Promise<number>;
}

export function createSharedSignals(transmitter: Transmitter, queue: SsfQueue): SharedSignals {
  return {
    pending: () => queue.pending(),
    async credentialChange(accountId, { change, credentialType, aaguid, friendlyName }) {
      const passkey = change === 'passkey_added' || change === 'passkey_removed';
      const added = change === 'passkey_added' || change === 'account_linked';
      await transmitter.signal({
        kind: 'credential_change', accountId, reason: change,
        fields: {
          credential_type: credentialType ?? (passkey ? 'fido2-platform' : 'federated'),
          change_type: added ? 'create' : 'delete',
          initiating_entity: 'user',
          ...(aaguid ? { fido2_aaguid: aaguid } : {}),
          ...(friendlyName ? { friendly_name: friendlyName } : {}),
        },
      });
    },
    async accountDisabled(accountId, options = {}) {
      await transmitter.signal({ kind: 'account_disabled', accountId, reason: 'account_disabled', fields: options.reason ? { reason: options.reason } : undefined });
    },
    async accountPurged(accountId) {
      await transmitter.signalNow({ kind: 'account_purged', accountId, reason: 'account_purged' });
    },
    async identifierChanged(accountId) {
      await transmitter.signal({ kind: 'identifier_changed', accountId, reason: 'identifier_changed' });
    },
  };
}
