import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { ConsolePerson, ConsoleSection, Logger, Preferences, RecentSignInRequest, SignoutNotify } from '../../src/index.ts';
import { createCsrf, crossOrigin, htmlErrors, PluginError, readForm, sameOrigin, sendPage, t, type Locale } from '../../src/pages.ts';
import { accountLabel, type Account, type Accounts } from './accounts.ts';
import { consolePerson, type ConsoleRequestPerson } from './console-person.ts';
import type { IpLimits } from './ip-limits.ts';
import { jsonOptions, nameSchema, shown } from './passkey-routes.ts';
import { MAX_PASSKEYS, type Passkey } from './passkeys.ts';
import type { PasskeySupport, UpstreamSupport } from './sign-in-support.ts';
import { startUpstream, upstreamCallbackRoute } from './upstream-routes.ts';
import { UpstreamError, type Upstream, type UpstreamState } from './upstreams.ts';
import { linkedAccountsSection } from './views/console/linked-accounts.ts';
import { passkeyRemovePage, passkeysSection, type PasskeyView } from './views/console/passkeys.ts';
import { parseRegistration, registrationOptions, verifyRegistration } from './webauthn.ts';

export interface ConsoleWaysDeps {
  provider: Provider;
  accounts: Accounts;
  preferences: Preferences;
  ipLimits: IpLimits;
  logger: Logger;
  serviceName: string;
  /** Key of these forms' CSRF tokens. */
  secret: string;
  passkeys?: PasskeySupport | undefined;
  upstreams?: UpstreamSupport | undefined;
  /** The plugin's check of a recent sign-in, for what adds a way in (a passkey, a link). */
  recentSignIn: SignoutNotify['recentSignIn'];
  /** The plugin's security notices: a passkey added or removed, an account linked or unlinked, is told. */
  securityNotice: SignoutNotify['securityNotice'];
  /** What upstreams said of the linked accounts (held, marked), shown with each link. */
  upstreamSignals?: Pick<SignoutNotify['upstreamSignals'], 'held' | 'marked'> | undefined;
  /** Tells the person's sites through Shared Signals (CAEP credential-change). */
  sharedSignals: SignoutNotify['sharedSignals'];
}

const ADD_PASSKEY: RecentSignInRequest = { action: 'add_passkey', back: '/console#passkeys' };
const LINK_ACCOUNT: RecentSignInRequest = { action: 'link_account', back: '/console#linked-accounts' };

const view = (k: Passkey): PasskeyView => ({ id: k.id, name: k.name, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt, synced: k.backedUp });

/**
 * How the person signs in, in their console: the Passkeys and Linked
 * accounts sections (given to the plugin as `console.sections`) and the
 * routes behind their forms, under /console/passkeys and
 * /console/linked-accounts. Every change needs the service session, a
 * request from the service's own pages and the person's CSRF token, and ends
 * with a redirect to the console with a notice in the section that changed.
 * What adds a way in (a passkey, a link) needs a recent sign-in too; what
 * only removes one never asks. A passkey added or removed, an account
 * linked or unlinked, is told (a security notice, one per passkey or
 * upstream: its credential id or the upstream's id is the notice's ref).
 */
export function consoleWays(deps: ConsoleWaysDeps) {
  const { provider, accounts, passkeys, upstreams, logger } = deps;
  const csrf = createCsrf(() => deps.secret);
  const token = (accountId: string) => csrf.token('console-ways', accountId);

  /** The ways in an account has: its address, its passkeys, its linked accounts. */
  async function waysOf(account: Account) {
    const [keys, links] = await Promise.all([
      passkeys ? passkeys.store.list(account.accountId) : [],
      upstreams ? upstreams.links.list(account.accountId) : [],
    ]);
    return { keys, links, count: (account.email ? 1 : 0) + keys.length + links.length };
  }

  async function sections(person: ConsolePerson): Promise<ConsoleSection[]> {
    const account = await accounts.get(person.accountId);
    if (!account || (!passkeys && !upstreams)) return [];
    const { keys, links, count } = await waysOf(account);
    const common = { locale: person.locale, csrf: token(account.accountId), email: account.email, ways: count, notice: person.notice };
    const out: ConsoleSection[] = [];
    if (passkeys) {
      out.push({
        id: 'passkeys',
        title: t(person.locale, 'console.passkeys.title'),
        html: passkeysSection({ ...common, passkeys: keys.map(view), full: keys.length >= MAX_PASSKEYS }),
        scripts: [passkeys.script],
      });
    }
    if (upstreams) {
      // What each upstream said of its linked account (two reads a link; the console page only).
      const said = await Promise.all(links.map(async (l) => {
        const [held, marked] = await Promise.all([deps.upstreamSignals?.held(l.upstream, l.sub), deps.upstreamSignals?.marked(l.upstream, l.sub)]);
        return { upstream: l.upstream, heldAt: held?.at, markedAt: marked?.at };
      }));
      out.push({
        id: 'linked-accounts',
        title: t(person.locale, 'console.upstreams.title'),
        html: linkedAccountsSection({
          ...common,
          upstreams: upstreams.clients.list.map((u) => {
            const link = links.find((l) => l.upstream === u.id);
            const { heldAt, markedAt } = said.find((s) => s.upstream === u.id) ?? {};
            return { id: u.id, name: u.name, link: link && { label: link.verifiedEmail ?? link.name, linkedAt: link.linkedAt, lastUsedAt: link.lastUsedAt, heldAt, markedAt } };
          }),
        }),
        formAction: upstreams.clients.formTargets(),
      });
    }
    return out;
  }

  const router = new Router();
  router.use(htmlErrors(deps.serviceName, () => provider.issuer));

  type Person = ConsoleRequestPerson;
  const person = consolePerson(provider, accounts, deps.preferences);

  /** A form of these sections: signed in, same origin, this person's token. */
  async function form(ctx: Context): Promise<Person & { fields: Record<string, string> }> {
    ctx.set('Cache-Control', 'no-store');
    const who = await person(ctx);
    if (!who) throw new errors.SessionNotFound('not signed in');
    if (!sameOrigin(ctx, provider.issuer)) throw crossOrigin();
    const fields = await readForm(ctx);
    csrf.verify('console-ways', who.account.accountId, fields.csrf);
    return { ...who, fields };
  }

  function back(ctx: Context, notice: string): void {
    ctx.status = 303;
    ctx.redirect(`/console?done=${notice}#notice`);
  }

  /** Not signed in recently: off to the plugin's page that says why, and nothing done. */
  async function signedInRecently(ctx: Context, request: RecentSignInRequest): Promise<boolean> {
    const recent = await deps.recentSignIn(ctx, request);
    if (recent.recent) return true;
    ctx.status = 303;
    ctx.redirect(recent.signInAgain);
    return false;
  }

  if (passkeys) {
    const { store, rp } = passkeys;

    async function ownPasskey(accountId: string, id: string): Promise<Passkey> {
      const found = (await store.list(accountId)).find((k) => k.id === id);
      if (!found) throw new PluginError('not_found', 'no such passkey');
      return found;
    }

    router.post('/console/passkeys/options', async (ctx) => {
      let locale: Locale | undefined;
      await jsonOptions(ctx, () => locale, async () => {
        const { account, locale: l, fields } = await form(ctx);
        locale = l;
        const recent = await deps.recentSignIn(ctx, ADD_PASSKEY);
        // The script goes to `location`, the page that says why and signs in again.
        if (!recent.recent) throw Object.assign(shown(401, 'insufficient_user_authentication', t(l, 'reauth.why.add_passkey')), { location: recent.signInAgain });
        const given = (fields.name ?? '').trim();
        if (given !== '' && !nameSchema.safeParse(given).success) throw shown(400, 'invalid_request', t(l, 'passkey.error.name'));
        const existing = await store.list(account.accountId);
        if (existing.length >= MAX_PASSKEYS) throw shown(400, 'invalid_request', t(l, 'console.passkeys.full'));
        const label = accountLabel(account) || deps.serviceName;
        const options = await registrationOptions(rp, { accountId: account.accountId, name: label, displayName: account.name ?? label }, existing);
        await store.putChallenge({ accountId: account.accountId }, {
          challenge: options.challenge, purpose: 'add', accountId: account.accountId,
          name: given || t(l, 'passkey.default_name', { number: existing.length + 1 }),
        });
        return options;
      });
    });

    router.post('/console/passkeys', async (ctx) => {
      const { account, fields } = await form(ctx);
      // Taken first: an answer from before a fresh sign-in is never used after it.
      const challenge = await store.takeChallenge({ accountId: account.accountId });
      if (!(await signedInRecently(ctx, ADD_PASSKEY))) return;
      const response = parseRegistration(fields.response);
      const passkey = challenge?.purpose === 'add' && response
        ? await verifyRegistration(rp, response, challenge.challenge, challenge.name ?? 'Passkey')
        : undefined;
      if (!passkey || !(await store.add(account.accountId, passkey))) {
        logger.warn('passkey not added', { accountId: account.accountId, reason: !challenge ? 'no challenge' : !response ? 'no answer' : 'not verified or taken' });
        back(ctx, 'passkey_failed');
        return;
      }
      logger.info('passkey added', { accountId: account.accountId });
      await deps.securityNotice(account.accountId, 'passkey_added', { name: passkey.name, ref: passkey.id });
      await deps.sharedSignals.credentialChange(account.accountId, { change: 'passkey_added', friendlyName: passkey.name });
      back(ctx, 'passkey_added');
    });

    router.post('/console/passkeys/:id/rename', async (ctx) => {
      const { account, fields } = await form(ctx);
      await ownPasskey(account.accountId, ctx.params.id!);
      const name = nameSchema.safeParse(fields.name ?? '');
      if (!name.success) throw new PluginError('invalid_request', 'name: 1 to 64 characters');
      await store.rename(account.accountId, ctx.params.id!, name.data);
      back(ctx, 'passkey_renamed');
    });

    router.get('/console/passkeys/:id/remove', async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      const who = await person(ctx);
      if (!who) {
        ctx.status = 303;
        ctx.redirect('/console');
        return;
      }
      const passkey = await ownPasskey(who.account.accountId, ctx.params.id!);
      const { count } = await waysOf(who.account);
      sendPage(ctx, passkeyRemovePage({
        locale: who.locale, serviceName: deps.serviceName, csrf: token(who.account.accountId),
        accountLabel: accountLabel(who.account), passkey: view(passkey), last: count <= 1,
      }));
    });

    router.post('/console/passkeys/:id/remove', async (ctx) => {
      const { account } = await form(ctx);
      const result = await store.remove(account.accountId, ctx.params.id!);
      if ('refused' in result && result.refused === 'missing') throw new PluginError('not_found', 'no such passkey');
      if ('removed' in result) {
        logger.info('passkey removed', { accountId: account.accountId });
        const { name } = JSON.parse(result.removed) as Pick<Passkey, 'name'>;
        await deps.securityNotice(account.accountId, 'passkey_removed', { name, ref: ctx.params.id! });
        await deps.sharedSignals.credentialChange(account.accountId, { change: 'passkey_removed', friendlyName: name });
      }
      back(ctx, 'removed' in result ? 'passkey_removed' : 'passkey_last');
    });
  }

  if (upstreams) {
    const upstreamOf = (id: string | undefined): Upstream => {
      const upstream = upstreams.clients.get(String(id));
      if (!upstream) throw new PluginError('not_found', 'no such upstream');
      return upstream;
    };

    router.post('/console/linked-accounts/:id/link', async (ctx) => {
      const { account, locale } = await form(ctx);
      const upstream = upstreamOf(ctx.params.id);
      if (!(await signedInRecently(ctx, LINK_ACCOUNT))) return;
      try {
        await startUpstream(ctx, upstreams, upstream, locale, { mode: 'link', accountId: account.accountId });
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        logger.warn('upstream link failed', { upstream: upstream.id, failure: err.failure, reason: err.message });
        back(ctx, 'upstream_failed');
      }
    });

    router.post('/console/linked-accounts/:id/unlink', async (ctx) => {
      const { account } = await form(ctx);
      const upstream = upstreamOf(ctx.params.id);
      const result = await upstreams.links.unlink(account.accountId, upstream.id);
      if ('refused' in result && result.refused === 'missing') throw new PluginError('not_found', 'not linked');
      if ('removed' in result) {
        logger.info('upstream account unlinked', { upstream: upstream.id, accountId: account.accountId });
        await deps.securityNotice(account.accountId, 'account_unlinked', { name: upstream.name, ref: upstream.id });
        await deps.sharedSignals.credentialChange(account.accountId, { change: 'account_unlinked' });
      }
      back(ctx, 'removed' in result ? 'upstream_unlinked' : 'upstream_last');
    });

    /** The upstream's answer to "Link": the same person still signed in here, the upstream account nobody else's. */
    async function link(ctx: Context, upstream: Upstream, peeked: UpstreamState, state: string): Promise<void> {
      const who = await person(ctx);
      const record = await upstreams!.links.takeState(state);
      if (!who || !record || record.mode !== 'link' || record.accountId !== who.account.accountId || peeked.upstream !== record.upstream) {
        await deps.ipLimits.hit('checks', ctx.ip);
        throw new errors.SessionNotFound('the link was started by another session');
      }
      try {
        const identity = await upstreams!.clients.identity(upstream, record, new URLSearchParams(ctx.querystring), state);
        const result = await upstreams!.links.link(who.account.accountId, upstream.id, identity);
        logger.info(result === 'linked' ? 'upstream account linked' : 'upstream account not linked', { upstream: upstream.id, accountId: who.account.accountId, result });
        if (result === 'linked') {
          await deps.securityNotice(who.account.accountId, 'account_linked', { name: upstream.name, ref: upstream.id });
          await deps.sharedSignals.credentialChange(who.account.accountId, { change: 'account_linked' });
        }
        back(ctx, `upstream_${result}`);
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        await deps.ipLimits.hit('checks', ctx.ip);
        logger.warn('upstream link failed', { upstream: upstream.id, failure: err.failure, reason: err.message });
        back(ctx, 'upstream_failed');
      }
    }

    upstreamCallbackRoute(router, { ...upstreams, ipLimits: deps.ipLimits, link });
  }

  return { sections, routes: router };
}
