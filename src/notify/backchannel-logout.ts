import { hash } from 'node:crypto';

import type Provider from 'oidc-provider';

import type { BackchannelLogoutEvent } from '../events.ts';
import type { Logger } from '../host.ts';
import { backchannelLogoutOf } from '../provider-types.ts';
import * as commands from './scripts.ts';
import type { Store } from '../store/store.ts';
import { RetryLogout, type LogoutJob, type LogoutQueue, type LogoutTry } from './logout-queue.ts';
import type { SecurityNotices } from './security-notices.ts';

/** Where a site's logout stands: being delivered, delivered, or given up. */
export type LogoutState = 'pending' | 'signed_out' | 'unreachable';

/** One site's logout as the person is shown it. */
export interface LogoutOutcome {
  clientId: string;
  state: LogoutState;
  /** When the sign-out happened (ms since the epoch). */
  at: number;
}

/** How long an outcome is kept: the console shows the last week's (a new one drops older ones). */
const OUTCOMES_KEPT_MS = 7 * 24 * 60 * 60_000;
/** The most outcomes a person's (or a sign-out's) record keeps: a new one drops the oldest past it. */
export const OUTCOMES_CAP = 100;

/** Key layout; documented in docs/redis-keys.md. */
export function logoutKeys(prefix: string) {
  return {
    /** The person's logouts: job id -> outcome (JSON), for the console. */
    account: (accountId: string) => `${prefix}account:{${accountId}}:logouts`,
    /** One sign-out's logouts: job id -> outcome (JSON), for its signed-out page. */
    signout: (signoutId: string) => `${prefix}signout:{${signoutId}}:logouts`,
    /** Beside each: job id -> when first written (ms), so the oldest go without reading the record (lua/logout_outcome.lua). */
    index: (key: string) => `${key}:at`,
  };
}

/**
 * The logout's id: a hash of the site, the session there (or the person),
 * and what caused it. A repeated trigger of one sign-out gives the same id,
 * so the site gets one logout token; the token is never part of it.
 */
export function logoutJobId(accountId: string, clientId: string, sid: string | undefined, cause: string): string {
  return hash('sha256', JSON.stringify([clientId, sid ?? null, accountId, cause]), 'base64url');
}

export interface BackchannelLogoutDeps {
  store: Store;
  queue: LogoutQueue;
  notices: SecurityNotices;
  logger: Logger;
  provider: () => Provider | undefined;
  emit: (event: BackchannelLogoutEvent) => void;
  options: { attempts: number; giveUpAfterMs: number };
}

/**
 * OpenID Back-Channel Logout 1.0, retried and shown (docs/backchannel-logout.md).
 * Each logout is first recorded (pending) and queued, then tried at once;
 * when the site does not answer 200/204 the queue tries again with backoff
 * until `attempts` or `giveUpAfterMs`, then the site is "could not be
 * reached" and the person gets a `site_unreachable` notice.
 */
export function createBackchannelLogout(deps: BackchannelLogoutDeps) {
  const { store, logger } = deps;
  const keys = logoutKeys(store.prefix);

  const write = (key: string, job: LogoutJob, state: LogoutState, onlyNew: boolean) =>
    store.run(commands.logoutOutcome(), [key, keys.index(key)], [job.id, JSON.stringify({ clientId: job.clientId, state, at: job.at }), OUTCOMES_KEPT_MS, onlyNew ? '1' : '0', Date.now(), OUTCOMES_CAP]);

  /**
   * Queues the logout, then records it as pending; false when this logout
   * was begun already (a repeated trigger: the queue kept the one job of its
   * id). Queued first, so a failure between the two leaves a job (the
   * worker sends it) rather than a record without one.
   */
  async function begin(job: LogoutJob): Promise<boolean> {
    await deps.queue.add(job);
    if (await write(keys.account(job.accountId), job, 'pending', true) !== 1) return false;
    if (job.signoutId) await write(keys.signout(job.signoutId), job, 'pending', false);
    return true;
  }

  async function settle(job: LogoutJob, state: LogoutState): Promise<void> {
    await write(keys.account(job.accountId), job, state, false);
    if (job.signoutId) await write(keys.signout(job.signoutId), job, state, false);
  }

  /** Where the logout stands (undefined: its record expired or never was). */
  async function stateOf(job: LogoutJob): Promise<LogoutState | undefined> {
    const [value] = await store.hmget(keys.account(job.accountId), [job.id]);
    return value ? (JSON.parse(value) as LogoutOutcome).state : undefined;
  }

  /** Records how the first try, right after the sign-out, went: its failure leaves the logout to the queue. */
  async function tried(job: LogoutJob, err?: Error): Promise<void> {
    if (err && deps.options.attempts <= 1) {
      await giveUp(job, 1, err.message);
      await deps.queue.drop(job.id);
      return;
    }
    if (err) {
      logger.warn('back-channel logout will be retried', { clientId: job.clientId, attempt: 1, reason: err.message });
      deps.emit({ clientId: job.clientId, outcome: 'retry', attempt: 1, reason: err.message });
      return;
    }
    await settle(job, 'signed_out');
    logger.info('back-channel logout delivered', { clientId: job.clientId });
    deps.emit({ clientId: job.clientId, outcome: 'sent', attempt: 1 });
    // Nothing left for the queue (were it to try anyway, it reads signed_out first).
    await deps.queue.drop(job.id);
  }

  async function firstTry(job: LogoutJob, send: () => Promise<void>): Promise<void> {
    const err = await send().then(() => undefined, (e: Error) => e);
    await tried(job, err);
  }

  /** The logout is over without the site's answer: "could not be reached", and the person is told. */
  async function giveUp(job: LogoutJob, attempt: number, reason: string): Promise<LogoutTry> {
    await settle(job, 'unreachable');
    logger.warn('back-channel logout given up: the site could not be reached', { clientId: job.clientId, attempt, reason });
    deps.emit({ clientId: job.clientId, outcome: 'failed', attempt, reason });
    const client = await deps.provider()?.Client.find(job.clientId).catch(() => undefined);
    await deps.notices.give(job.accountId, 'site_unreachable', { clientId: job.clientId, name: client?.clientName ?? job.clientId, ref: job.id });
    return 'unreachable';
  }

  const timeLeft = (job: LogoutJob) => Date.now() - job.at < deps.options.giveUpAfterMs;

  async function clientFor(clientId: string) {
    const client = await deps.provider()?.Client.find(clientId).catch(() => undefined);
    return client?.backchannelLogoutUri ? client : undefined;
  }

  /**
   * Tells the site the person's access or session there ended: one logout
   * token per session of the person there when the site requires `sid` (a
   * token without it would be invalid for that site, so with no session
   * known none is sent), else one token with `sub` only, which covers every
   * session. `cause` names the event (a repeated trigger of the same cause
   * sends nothing again).
   */
  async function queueLogout(accountId: string, clientId: string, sids: string[], cause: string, signoutId?: string): Promise<void> {
    const client = await clientFor(clientId);
    if (!client) return;
    const targets: (string | undefined)[] = client.backchannelLogoutSessionRequired ? sids : [undefined];
    const at = Date.now();
    const send = backchannelLogoutOf(client);
    await Promise.all(targets.map(async (sid) => {
      const job: LogoutJob = { id: logoutJobId(accountId, clientId, sid, cause), accountId, clientId, sid, signoutId, at };
      if (await begin(job)) await firstTry(job, () => send(accountId, sid));
    }));
  }

  /** The queue's try (`tries`: the queue's count; the first try at the sign-out came before). */
  async function retry(job: LogoutJob, tries: number): Promise<LogoutTry> {
    if (job.erased) return retryErased(job, tries);
    const state = await stateOf(job);
    if (state === 'signed_out' || state === 'unreachable') return 'already_done';
    const client = await clientFor(job.clientId);
    if (!client) {
      logger.warn('back-channel logout dropped: the site is gone or has no back-channel logout address', { clientId: job.clientId });
      return 'dropped';
    }
    // The queue's tries follow the one at the sign-out.
    const attempt = tries + 1;
    try {
      await backchannelLogoutOf(client)(job.accountId, job.sid);
    } catch (err) {
      const reason = (err as Error).message;
      if (attempt >= deps.options.attempts || !timeLeft(job)) return giveUp(job, attempt, reason);
      logger.warn('back-channel logout will be retried', { clientId: job.clientId, attempt, reason });
      deps.emit({ clientId: job.clientId, outcome: 'retry', attempt, reason });
      throw new RetryLogout(reason);
    }
    await settle(job, 'signed_out');
    logger.info('back-channel logout delivered', { clientId: job.clientId, attempt });
    deps.emit({ clientId: job.clientId, outcome: 'sent', attempt });
    return 'signed_out';
  }

  /** A deleted person's logout: delivered as any other, with nothing recorded about them and no one told. */
  async function retryErased(job: LogoutJob, tries: number): Promise<LogoutTry> {
    const client = await clientFor(job.clientId);
    if (!client) return 'dropped';
    const attempt = tries + 1;
    try {
      await backchannelLogoutOf(client)(job.accountId, job.sid);
    } catch (err) {
      const reason = (err as Error).message;
      if (attempt >= deps.options.attempts || !timeLeft(job)) {
        logger.warn('back-channel logout of a deleted person given up: the site could not be reached', { clientId: job.clientId, attempt, reason });
        deps.emit({ clientId: job.clientId, outcome: 'failed', attempt, reason });
        return 'unreachable';
      }
      deps.emit({ clientId: job.clientId, outcome: 'retry', attempt, reason });
      throw new RetryLogout(reason);
    }
    deps.emit({ clientId: job.clientId, outcome: 'sent', attempt });
    return 'signed_out';
  }

  const list = async (key: string): Promise<LogoutOutcome[]> =>
    Object.values(await store.hgetall(key)).map((v) => JSON.parse(v) as LogoutOutcome).sort((a, b) => b.at - a.at || a.clientId.localeCompare(b.clientId));

  return {
    begin,
    tried,
    queueLogout,
    retry,
    /** One sign-out's logouts, for its signed-out page. */
    outcomesOfSignout: (signoutId: string) => list(keys.signout(signoutId)),
    /** The person's logouts of the last week, newest first, for the console. */
    outcomesOf: (accountId: string) => list(keys.account(accountId)),
  };
}

export type BackchannelLogout = ReturnType<typeof createBackchannelLogout>;
