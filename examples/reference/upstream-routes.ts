import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from 'oidc-provider';

import type { Logger, SignoutNotify } from '../../src/index.ts';
import { PluginError, t, type Locale, type MessageKey } from '../../src/pages.ts';
import { looksLikeAddress, type Account, type Accounts } from './accounts.ts';
import type { InteractionKit, InteractionState } from './interaction-kit.ts';
import type { IpLimits } from './ip-limits.ts';
import type { UpstreamSupport } from './sign-in-support.ts';
import { federatedAmr } from './strength.ts';
import type { LinkFirst } from './upstream-link-first.ts';
import { trustedDomain, UpstreamError, type Upstream, type UpstreamFailure, type UpstreamIdentity, type UpstreamState } from './upstreams.ts';

interface Deps extends UpstreamSupport {
  accounts: Accounts;
  ipLimits: IpLimits;
  logger: Logger;
  issuer: () => string;
  linkFirst: LinkFirst;
  securityNotice: SignoutNotify['securityNotice'];
  /** Tells the person's sites through Shared Signals (CAEP credential-change) when an account is linked. */
  sharedSignals: SignoutNotify['sharedSignals'];
  /** Whether the upstream said this upstream account may be taken over (sign-in through it held until account-enabled). */
  upstreamHeld: SignoutNotify['upstreamSignals']['held'];
}

const FAILURE_KEYS: Readonly<Record<UpstreamFailure, MessageKey>> = {
  denied: 'upstream.error.denied',
  failed: 'upstream.error.failed',
  unavailable: 'upstream.error.unavailable',
  reauth: 'upstream.error.reauth',
  expired: 'upstream.error.expired',
  held: 'upstream.error.held',
};

/** The sentence for a failed upstream sign-in, naming the upstream as configured (never the upstream's own words). */
function upstreamFailure(locale: Locale, failure: UpstreamFailure, upstream: Upstream): string {
  return t(locale, FAILURE_KEYS[failure], { name: upstream.name });
}

/**
 * Sends the person to the upstream with a fresh state (kept server-side,
 * 10 minutes) for `login` (an interaction) or `link` (the console).
 */
export async function startUpstream(ctx: Context, deps: UpstreamSupport, upstream: Upstream, locale: Locale, state: Pick<UpstreamState, 'mode' | 'uid' | 'accountId'>): Promise<void> {
  const { url, state: value, record } = await deps.clients.authorizationUrl(upstream, { locale });
  await deps.links.putState(value, { ...record, ...state });
  ctx.status = 303;
  ctx.redirect(url.href);
}

/**
 * The account an upstream identity signs in to: the one linked to it; else,
 * when the upstream says the address is verified, a new account of that
 * address, linked; else a new account without an address (an unverified
 * address proves nothing and is not kept). A verified address that is an
 * existing account's (compared by addressKey) signs in nobody: `ask`, the
 * account's proof first (upstream-link-first.ts), unless the upstream owns
 * the address' domain (`trustedEmailDomains`): then it links at once and
 * the owner is told. A name that looks like an address is not kept.
 */
async function accountFor(deps: Deps, upstream: Upstream, identity: UpstreamIdentity, locale: Locale): Promise<{ accountId: string } | { ask: Account }> {
  const linked = await deps.links.owner(upstream.id, identity.sub);
  if (linked) {
    if (await deps.accounts.get(linked)) {
      await deps.links.used(linked, upstream.id);
      return { accountId: linked };
    }
    await deps.links.forget(upstream.id, identity.sub, linked);
  }
  const name = identity.name && !looksLikeAddress(identity.name) ? identity.name : undefined;
  let existing = false;
  let account: Account;
  if (identity.verifiedEmail) {
    const found = await deps.accounts.findByEmail(identity.verifiedEmail);
    const claimed = found ? { account: found, created: false } : await deps.accounts.claim(identity.verifiedEmail, { locale, name });
    ({ account } = claimed);
    existing = !claimed.created;
    if (existing && !trustedDomain(upstream, identity.verifiedEmail)) return { ask: account };
  } else {
    account = await deps.accounts.create({ name, locale });
  }
  const result = await deps.links.link(account.accountId, upstream.id, identity);
  // Two first sign-ins at once: the one that linked first wins.
  if (result === 'taken') return { accountId: (await deps.links.owner(upstream.id, identity.sub)) ?? account.accountId };
  deps.logger.info(result === 'linked' ? 'upstream account linked' : 'upstream sign-in by verified address; the account keeps its other link', { upstream: upstream.id, accountId: account.accountId, ...(existing ? { trustedDomain: true } : {}) });
  if (existing && result === 'linked') {
    await deps.securityNotice(account.accountId, 'account_linked', { name: upstream.name, ref: upstream.id });
    await deps.sharedSignals.credentialChange(account.accountId, { change: 'account_linked' });
  }
  return { accountId: account.accountId };
}

/**
 * The routes of social sign-in: the button of a sign-in page (a form POST:
 * off to the upstream), the redirect URI (`/upstream/<id>/callback`, which
 * hands an interaction's answer to the interaction's own address, under its
 * cookie), and the answer's check and sign-in. An upstream that refuses or
 * fails ends on the sign-in page saying so, every way in offered again; it
 * counts against the IP's check limit, as a wrong code does.
 */
export function upstreamInteractionRoutes(router: Router, kit: InteractionKit, deps: Deps): void {
  const { clients, links, ipLimits, logger } = deps;

  function upstreamOf(ctx: Context): Upstream {
    const upstream = clients.get(String(ctx.params.id));
    if (!upstream) throw new PluginError('not_found', 'no such upstream');
    return upstream;
  }

  async function failed(ctx: Context, s: InteractionState, upstream: Upstream, err: UpstreamError, status: number) {
    await ipLimits.hit('checks', ctx.ip);
    logger.warn('upstream sign-in failed', { upstream: upstream.id, failure: err.failure, reason: err.message });
    await kit.renderLogin(ctx, s, { alert: upstreamFailure(s.locale, err.failure, upstream) }, status);
  }

  router.post('/interaction/:uid/upstream/:id', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    const upstream = upstreamOf(ctx);
    const busy = await kit.busy(ctx, s);
    if (busy) {
      await kit.renderLogin(ctx, s, { alert: busy }, 429);
      return;
    }
    try {
      await startUpstream(ctx, deps, upstream, s.locale, { mode: 'login', uid: s.uid });
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      await failed(ctx, s, upstream, err, 502);
    }
  });

  router.get('/interaction/:uid/upstream/:id/callback', async (ctx) => {
    const s = await kit.load(ctx);
    const upstream = upstreamOf(ctx);
    // Asked before the state is taken: a refused person can come back with the same answer once the wait is over.
    const busy = await kit.busy(ctx, s);
    if (busy) {
      await kit.renderLogin(ctx, s, { alert: busy }, 429);
      return;
    }
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const record = state ? await links.takeState(state) : undefined;
    if (!record || record.mode !== 'login' || record.uid !== s.uid || record.upstream !== upstream.id) {
      await failed(ctx, s, upstream, new UpstreamError('expired', 'no such state for this interaction'), 400);
      return;
    }
    let identity: UpstreamIdentity;
    try {
      identity = await clients.identity(upstream, record, new URLSearchParams(ctx.querystring), state);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      await failed(ctx, s, upstream, err, err.failure === 'denied' ? 403 : 502);
      return;
    }
    if (!kit.offers(s, 'upstream')) throw new errors.InvalidRequest('the site asked for another way of signing in');
    if (await deps.upstreamHeld(upstream.id, identity.sub)) {
      await failed(ctx, s, upstream, new UpstreamError('held', 'the upstream said this account may be taken over (held until account-enabled)'), 403);
      return;
    }
    const found = await accountFor(deps, upstream, identity, s.locale);
    if ('ask' in found) {
      await deps.linkFirst.ask(ctx, kit, s, upstream, identity, found.ask, federatedAmr(identity.amr));
      return;
    }
    logger.info('signed in through an upstream', { upstream: upstream.id, accountId: found.accountId });
    await kit.signedIn(ctx, s, { accountId: found.accountId, way: 'upstream', amr: federatedAmr(identity.amr), upstream: upstream.id });
  });
}

/**
 * The redirect URI registered at every upstream. An interaction's answer goes
 * on to the interaction's own address (its cookie lives there); a console's
 * link is finished by `link`. Its query (the code with it) stays on the
 * service's own origin.
 */
export function upstreamCallbackRoute(router: Router, deps: UpstreamSupport & { ipLimits: IpLimits; link(ctx: Context, upstream: Upstream, record: UpstreamState, state: string): Promise<void> }): void {
  router.get('/upstream/:id/callback', async (ctx) => {
    const upstream = deps.clients.get(String(ctx.params.id));
    if (!upstream) throw new PluginError('not_found', 'no such upstream');
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const record = state ? await deps.links.peekState(state) : undefined;
    if (!record || record.upstream !== upstream.id) {
      // An answer nobody asked for, or one used already: a failure like any other.
      await deps.ipLimits.hit('checks', ctx.ip);
      throw new errors.SessionNotFound('upstream state unknown or expired');
    }
    if (record.mode === 'link') {
      await deps.link(ctx, upstream, record, state);
      return;
    }
    ctx.status = 303;
    ctx.redirect(`/interaction/${encodeURIComponent(record.uid ?? '')}/upstream/${upstream.id}/callback?${ctx.querystring}`);
  });
}
