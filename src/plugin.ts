import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { attachTo } from './attach.ts';
import { commandMode } from './command/mode.ts';
import { resolveOptions, type SignoutNotifyOptions } from './options.ts';
import { isSecurityNoticeKind, SECURITY_NOTICE_KINDS } from './notify/security-notices.ts';
import { queueCounts } from './queue/counts.ts';
import { createParts, type Providers } from './parts.ts';
import { configureProvider } from './provider/configure.ts';
import type { SignoutNotify } from './signout-notify.ts';
import { createSharedSignals } from './ssf/host-api.ts';

export type { SignoutNotify } from './signout-notify.ts';

/** An issuer a development machine runs on: its letters may go to the log. */
function onLoopback(issuer: string): boolean {
  const host = new URL(issuer).hostname;
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]';
}

/**
 * Creates the plugin. Nothing happens until this is called: importing the
 * package has no side effects.
 */
export function createSignoutNotify(input: SignoutNotifyOptions): SignoutNotify {
  const options = resolveOptions(input);
  const providers: Providers = {};
  const parts = createParts(options, providers);
  const { logger, store, adapter, mailer, sites, sessions, organizations, senders, inbox, preferences, letters, access, events } = parts;
  // What configure() made, for the steps attach() mounts (discovery's response modes).
  let configured: Configuration | undefined;

  // Letters printed to the log leak their links (and a host's sign-in codes)
  // wherever logs go: only on loopback, or when the host says so.
  const checkMail = (issuer: string) => {
    if (!mailer.development || onLoopback(issuer)) return;
    if (options.mail.outbox !== 'log') {
      throw new TypeError(`oidc-signout-notify: no mail transport for ${issuer}: set mail.transport or mail.smtpUrl, or mail.outbox: 'log' to print letters to the log`);
    }
    logger.warn(`oidc-signout-notify: LETTERS ARE PRINTED TO THE LOG (mail.outbox: 'log') for ${issuer}: unsubscribe links and any sign-in codes are readable by whoever reads the logs. Configure SMTP for real use.`);
  };
  const startLetterWorker = (from?: Provider) => {
    if (from) {
      checkMail(from.issuer);
      providers.forLetters = from;
    }
    if (!providers.attached && !providers.forLetters) {
      throw new TypeError('oidc-signout-notify: startLetterWorker(provider) needs the provider (built with the service\'s configuration) when the plugin is not attached');
    }
    letters.startWorker(parts.sendLetter);
    parts.ssfQueue.startWorker(parts.transmitter.process);
    // Back-channel logouts left to retry go with the letters (src/notify/backchannel-logout.ts).
    parts.logoutQueue.startWorker(parts.logouts.retry);
    parts.expirySweeper.start(parts.sessionExpiry.sweep);
    // Upstreams whose streams are polled (RFC 8936), one instance at a time.
    parts.upstreamPoller.start();
  };

  return {
    options,
    store,
    adapter,
    mailer,
    logger,
    sites,
    sessions,
    organizations,
    senders,
    inbox,
    preferences,
    letters,
    startLetterWorker,
    async stopLetterWorker() {
      parts.upstreamPoller.stop();
      await Promise.all([letters.stopWorker(), parts.ssfQueue.stopWorker(), parts.logoutQueue.stopWorker(), parts.expirySweeper.stop()]);
    },
    async queues() {
      if (!options.redis) throw new TypeError('oidc-signout-notify: queues() counts the queues on Redis; the embedded store keeps its queues in the service\'s process');
      return queueCounts(options.redis, options.keyPrefix);
    },
    sharedSignals: createSharedSignals(parts.transmitter, parts.ssfQueue),
    queueLogout: parts.logouts.queueLogout,
    sessionExpiry: { sweep: () => parts.sessionExpiry.sweep() },
    on(event, listener) {
      events.on(event, listener);
      return () => { events.off(event, listener); };
    },
    connectedSites: (accountId) => sites.list(accountId),
    blockSite: access.blockSite,
    unblockSite: access.unblockSite,
    removeAccess: access.removeAccess,
    removeAllAccess: access.removeAllAccess,
    removeMember: access.removeMember,
    async endSiteAccess(clientId) {
      const at = await adapter.endSiteGrants(clientId);
      logger.warn('every grant of the site ended by the service', { clientId });
      return at;
    },
    endAccountAccess: parts.endAccountAccess,
    upstreamSignals: {
      held: parts.upstreamSignals.held,
      marked: parts.upstreamSignals.marked,
      recent: parts.upstreamSignals.recent,
      async connect(upstreamId) {
        const issuer = providers.attached?.issuer ?? providers.forLetters?.issuer;
        if (!issuer) throw new TypeError('oidc-signout-notify: upstreamSignals.connect needs the provider: attach the plugin first');
        return parts.upstreamConnect.connect(upstreamId, issuer);
      },
      stream: parts.upstreamConnect.stream,
    },
    deleteAccount: parts.deleteAccount,
    adoption: parts.adoption,
    async securityNotice(accountId, kind, details = {}) {
      if (!isSecurityNoticeKind(kind)) throw new TypeError(`oidc-signout-notify: securityNotice: unknown kind "${String(kind)}"; one of ${SECURITY_NOTICE_KINDS.join(', ')}`);
      return parts.notices.give(accountId, kind, details);
    },
    recentSignIn: (ctx, request) => parts.recentSignIn.check(ctx, request),
    configure: (host) => {
      const made = configureProvider(host, {
        adapter,
        logger,
        allowPrivateFetchHosts: options.allowPrivateFetchHosts,
        serviceName: options.serviceName,
        contacts: parts.contacts,
        sites,
        orgs: organizations,
        lastUsed: parts.lastUsed,
        logouts: parts.logouts,
        globalTokenRevocationScope: options.upstreamSignals.globalTokenRevocation.clients.length > 0 ? options.upstreamSignals.globalTokenRevocation.scope : undefined,
      });
      configured = made;
      providers.jwks = host.jwks as typeof providers.jwks;
      // The reuse leeway checks the account as a refresh would (parts.ts, accountLives).
      providers.findAccount = made.findAccount;
      return made;
    },
    attach(target) {
      checkMail(target.issuer);
      providers.attached = target;
      attachTo(target, parts, configured);
      if (options.letters.worker && !commandMode.on) startLetterWorker();
    },
    async close() {
      parts.upstreamPoller.stop();
      await Promise.all([letters.close(), parts.ssfQueue.close(), parts.logoutQueue.close(), parts.expirySweeper.close(), parts.closeAdoption()]);
      await mailer.close();
      await store.close();
    },
  };
}
