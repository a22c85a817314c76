// What a strict TypeScript host writes against the package's exported types.
// Every `@ts-expect-error` below must be an error: if a type were `any`, the
// line would compile, the directive would be unused, and tsc would fail.
import nodemailer from 'nodemailer';
import Provider from 'oidc-provider';
import {
  REPLAY_EVENT,
  createSignoutNotify,
  type BlockResult,
  type ConnectedSite,
  type RemoveMemberResult,
  type SecurityNoticeResult,
  type ReplayEvent,
  type SignoutNotify,
  type SignoutNotifyEvents,
  type SignoutNotifyOptions,
  type UnblockResult,
} from 'oidc-signout-notify';
import { memoryAdapter } from 'oidc-signout-notify/adapters/memory';
import { redisAdapter } from 'oidc-signout-notify/adapters/redis';
import { runLetterWorker, type LetterWorker } from 'oidc-signout-notify/worker';

import { plugin, provider, redis } from './provider.js';

const typed: SignoutNotify = plugin;

const options: SignoutNotifyOptions = {
  contacts: async () => ({ email: 'someone@example.com', locale: 'fr' }),
  keyPrefix: 'idp:',
  notify: { perPerson: { limit: 10, windowSeconds: 3600 } },
  letters: { worker: false, attempts: 5 },
};
// A nodemailer transport is what `mail.transport` takes; a number is not.
const withTransport: SignoutNotifyOptions = { contacts: () => undefined, mail: { transport: nodemailer.createTransport({ jsonTransport: true }) } };
// @ts-expect-error a transport has sendMail
const badTransport: SignoutNotifyOptions = { contacts: () => undefined, mail: { transport: 42 } };
// @ts-expect-error contacts is required
const missingContacts: SignoutNotifyOptions = { keyPrefix: 'idp:' };
// @ts-expect-error an option the plugin does not have
const unknownOption: SignoutNotifyOptions = { contacts: () => undefined, colour: 'blue' };
// @ts-expect-error attempts is a number
const badAttempts: SignoutNotifyOptions = { contacts: () => undefined, letters: { attempts: 'many' } };
// Security notices: each kind on or off, the host's words per language, as a table or a function of the language.
const notices: SignoutNotifyOptions = { contacts: () => undefined, securityNotices: { new_browser: false, signInCheck: (locale) => (locale === 'de' ? 'Prüfen Sie Ihr Passwort.' : undefined) } };
const noticeWords: SignoutNotifyOptions = { contacts: () => undefined, securityNotices: { signInCheck: { en: 'Check your password.', fr: 'Vérifiez votre mot de passe.' } } };
// @ts-expect-error a language the service does not speak
const noticeWordsEs: SignoutNotifyOptions = { contacts: () => undefined, securityNotices: { signInCheck: { es: 'Revise su contraseña.' } } };

export async function usePlugin(accountId: string, clientId: string): Promise<void> {
  const blocked: BlockResult = await typed.blockSite(accountId, clientId);
  const unblocked: UnblockResult = await typed.unblockSite(accountId, clientId);
  const removed: RemoveMemberResult = await typed.removeMember('org-1', accountId);
  const sites: ConnectedSite[] = await typed.connectedSites(accountId);
  const told: SecurityNoticeResult = await typed.securityNotice(accountId, 'passkey_added', { name: 'Work key', ref: 'credential-1' });
  // @ts-expect-error the theft notice is the plugin's own
  await typed.securityNotice(accountId, 'theft');
  // @ts-expect-error blockSite answers a string union, not a boolean
  const wrong: boolean = await typed.blockSite(accountId, clientId);
  // @ts-expect-error lastSignInAt is a time in milliseconds, not a string
  const when: string = sites[0]!.lastSignInAt;
  console.log(blocked, unblocked, removed, sites, wrong, when, told);
}

const stop: () => void = plugin.on(REPLAY_EVENT, (event) => {
  const grant: string | undefined = event.grantId;
  const model: string = event.model;
  // @ts-expect-error the payload has no token, by design
  console.log(grant, model, event.token);
});
stop();
const listener: SignoutNotifyEvents[typeof REPLAY_EVENT] = (event: ReplayEvent) => { console.log(event.clientId); };
plugin.on(REPLAY_EVENT, listener);
// @ts-expect-error only the plugin's events
plugin.on('signout_notify.no_such_event', () => {});

const worker: LetterWorker = runLetterWorker({ plugin, provider, signals: ['SIGTERM'] });
// @ts-expect-error the worker needs the provider
runLetterWorker({ plugin });
await worker.stop();

const viaRedis = new Provider('https://id.example', { adapter: redisAdapter(redis, { keyPrefix: 'idp:' }).factory });
const inMemory = new Provider('https://id.example', { adapter: memoryAdapter().factory });
const other = createSignoutNotify(options);
console.log(viaRedis.issuer, inMemory.issuer, other.options.keyPrefix, missingContacts, unknownOption, badAttempts, withTransport, badTransport, notices, noticeWords, noticeWordsEs);
