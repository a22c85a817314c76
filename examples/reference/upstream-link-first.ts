/**
 * Linking that asks first (docs/security.md "Linking an upstream account"):
 * an upstream sign-in whose verified address belongs to an account here
 * makes no session and no link until the person proves that account, by the
 * code emailed to its address or by one of its passkeys. What the upstream
 * said waits under the interaction, as long as the interaction lives, and is
 * taken by the sign-in that proves the account: then it is linked, the
 * sign-in finishes into it and the owner is told (`account_linked`).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';

import type { Logger, SignoutNotify } from '../../src/index.ts';
import { sendPage } from '../../src/pages.ts';
import { putTtl, type Store } from '../../src/store-kit.ts';
import type { Accounts } from './accounts.ts';
import type { InteractionKit, InteractionState } from './interaction-kit.ts';
import { takeRecord } from './sign-in-method-scripts.ts';
import type { PasskeySupport, UpstreamSupport } from './sign-in-support.ts';
import type { Upstream, UpstreamIdentity } from './upstreams.ts';
import { linkFirstPage } from './views/interaction/link-first.ts';

/** An upstream sign-in that waits for the account's proof, kept under its interaction. */
interface PendingLink {
  upstream: string;
  /** The account the verified address belongs to. */
  accountId: string;
  identity: UpstreamIdentity;
  /** The sign-in's amr through the upstream (strength.ts federatedAmr). */
  amr: string[];
}

/** How long a pending link is kept at most: an interaction's lifetime (the provider's default, 1 hour). */
const MAX_PENDING_MS = 60 * 60_000;

export interface LinkFirstDeps {
  store: Store;
  accounts: Accounts;
  issuer: () => string;
  upstreams: UpstreamSupport;
  passkeys?: PasskeySupport | undefined;
  securityNotice: SignoutNotify['securityNotice'];
  /** Tells the person's sites through Shared Signals (CAEP credential-change) when an account is linked. */
  sharedSignals: SignoutNotify['sharedSignals'];
  logger: Logger;
  serviceName: string;
  /** Sends a code to the address for this interaction (code-sign-in.ts); a refusal's sentence when the limits say no. */
  sendCode(ctx: Context, s: InteractionState, email: string): Promise<string | undefined>;
}

/**
 * `<prefix>upstream-pending:{<interaction uid>}` hash { upstream, accountId,
 * identity (JSON), amr (JSON) }, with the interaction's remaining lifetime as its TTL.
 */
export function createLinkFirst(deps: LinkFirstDeps) {
  const { store, upstreams, logger } = deps;
  const key = (uid: string) => `${store.prefix}upstream-pending:{${uid}}`;
  const accountOf = (pending: PendingLink) => deps.accounts.get(pending.accountId);

  async function peek(uid: string): Promise<PendingLink | undefined> {
    const record = await store.hgetall(key(uid));
    return record.upstream ? parse(record) : undefined;
  }
  const parse = (record: Record<string, string>): PendingLink => ({
    upstream: record.upstream!, accountId: record.accountId!,
    identity: JSON.parse(record.identity!) as UpstreamIdentity, amr: JSON.parse(record.amr!) as string[],
  });

  async function render(ctx: Context, kit: InteractionKit, s: InteractionState, pending: PendingLink, view: { error?: string | undefined } = {}, status = 200) {
    const account = await accountOf(pending);
    const upstream = upstreams.clients.get(pending.upstream);
    if (!account?.email || !upstream) {
      await store.del([key(s.uid)]);
      await kit.renderLogin(ctx, s, {}, status);
      return;
    }
    // Both proofs are offered whatever the site asked for: the sign-in then ends as the upstream's where the site allows only that (interaction-kit.ts signedIn).
    const { passkeys } = deps;
    sendPage(ctx, linkFirstPage({
      locale: s.locale, serviceName: deps.serviceName, csrf: s.csrf, upstreamName: upstream.name, email: account.email,
      codeAction: `${s.base}/link/code`, cancelAction: `${s.base}/link/cancel`,
      passkeys: passkeys && { script: new URL(passkeys.script, deps.issuer()).href, rpId: passkeys.rp.id, optionsAction: `${s.base}/passkey/options`, action: `${s.base}/passkey` },
      formAction: s.formAction, error: view.error,
    }), status);
  }

  return {
    peek,
    /** Keeps what the upstream said under the interaction and asks for the account's proof (the page). */
    async ask(ctx: Context, kit: InteractionKit, s: InteractionState, upstream: Upstream, identity: UpstreamIdentity, account: { accountId: string }, amr: string[]): Promise<void> {
      const ttl = Math.min(MAX_PENDING_MS, Math.max(1000, s.details.exp * 1000 - Date.now()));
      await store.run(putTtl(), [key(s.uid)], [ttl, 'upstream', upstream.id, 'accountId', account.accountId, 'identity', JSON.stringify(identity), 'amr', JSON.stringify(amr)]);
      logger.info('upstream sign-in by the verified address of an account: its proof asked first', { upstream: upstream.id, accountId: account.accountId });
      await render(ctx, kit, s, { upstream: upstream.id, accountId: account.accountId, identity, amr });
    },

    /** The page again (GET of the interaction), when a link waits; false when none does. */
    async show(ctx: Context, kit: InteractionKit, s: InteractionState): Promise<boolean> {
      const pending = await peek(s.uid);
      if (!pending) return false;
      await render(ctx, kit, s, pending);
      return true;
    },

    /**
     * The sign-in proved `accountId` by a code or a passkey: takes the waiting
     * link; when it is this account's, links it and tells the owner, and
     * gives the upstream's amr to add. Another account's proof drops it.
     */
    async settle(uid: string, accountId: string): Promise<string[] | undefined> {
      const record = await takeRecord(store, key(uid));
      if (!record?.upstream) return undefined;
      const pending = parse(record);
      if (pending.accountId !== accountId) {
        logger.info('a waiting upstream link dropped: the sign-in proved another account', { upstream: pending.upstream });
        return undefined;
      }
      const upstream = upstreams.clients.get(pending.upstream);
      if (!upstream) return undefined;
      const result = await upstreams.links.link(accountId, upstream.id, pending.identity);
      logger.info(result === 'linked' ? 'upstream account linked after the account was proved' : 'upstream account not linked', { upstream: upstream.id, accountId, result });
      if (result === 'linked') {
        await deps.securityNotice(accountId, 'account_linked', { name: upstream.name, ref: upstream.id });
        await deps.sharedSignals.credentialChange(accountId, { change: 'account_linked' });
      }
      return pending.amr;
    },

    /** The routes of the page: "Email me a code" and "Cancel". */
    routes(router: Router, kit: InteractionKit): void {
      router.post('/interaction/:uid/link/code', async (ctx) => {
        const { s } = await kit.loadForm(ctx);
        const pending = await peek(s.uid);
        const account = pending && await accountOf(pending);
        if (!pending || !account?.email) {
          ctx.status = 303;
          ctx.redirect(s.base);
          return;
        }
        const refused = await deps.sendCode(ctx, s, account.email);
        if (refused) {
          await render(ctx, kit, s, pending, { error: refused }, 429);
          return;
        }
        ctx.status = 303;
        ctx.redirect(s.base);
      });

      router.post('/interaction/:uid/link/cancel', async (ctx) => {
        const { s } = await kit.loadForm(ctx);
        await store.del([key(s.uid)]);
        ctx.status = 303;
        ctx.redirect(s.base);
      });
    },
  };
}

export type LinkFirst = ReturnType<typeof createLinkFirst>;
