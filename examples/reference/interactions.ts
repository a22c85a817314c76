import Router from '@koa/router';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { Logger, Mailer, SignoutNotify } from '../../src/index.ts';
import { htmlErrors, sendPage } from '../../src/pages.ts';
import type { Store } from '../../src/store-kit.ts';
import { accountLabel, type Accounts } from './accounts.ts';
import { codeSignIn } from './code-sign-in.ts';
import { createInteractionKit, SELECT_ACCOUNT } from './interaction-kit.ts';
import type { LoginCodes } from './login-codes.ts';
import { passkeyInteractionRoutes } from './passkey-routes.ts';
import type { PasskeySupport, UpstreamSupport } from './sign-in-support.ts';
import { createLinkFirst } from './upstream-link-first.ts';
import { upstreamInteractionRoutes } from './upstream-routes.ts';
import type { Way } from './strength.ts';
import { consentPage } from './views/interaction/consent.ts';
import { selectAccountPage } from './views/interaction/select-account.ts';

const WAYS: readonly Way[] = ['code', 'passkey', 'upstream'];

export interface InteractionDeps {
  provider: Provider;
  accounts: Accounts;
  loginCodes: LoginCodes;
  mailer: Mailer;
  serviceName: string;
  /** Key for the forms' CSRF tokens and the browser id cookie. */
  secret: string;
  logger: Logger;
  /** Passkeys, where the issuer allows WebAuthn (webauthn.ts). */
  passkeys?: PasskeySupport | undefined;
  /** Social sign-ins (CONFIG_FILE `upstreams`). */
  upstreams?: UpstreamSupport | undefined;
  /** The plugin's store: an upstream sign-in that waits for an account's proof (upstream-link-first.ts). */
  store: Store;
  /** Whether sign-in through an upstream is held for an upstream account (the plugin's upstreamSignals.held). */
  upstreamHeld: SignoutNotify['upstreamSignals']['held'];
  /** The plugin's security notices: an upstream account linked to an existing one is told. */
  securityNotice: SignoutNotify['securityNotice'];
  /** Tells the person's sites through Shared Signals (CAEP credential-change) when an account is linked. */
  sharedSignals: SignoutNotify['sharedSignals'];
}

/**
 * The reference provider's sign-in: email address and emailed 6-digit code
 * (code-sign-in.ts), a passkey or an upstream where configured, consent, and
 * account selection. Hosts bring their own; this one shows a complete,
 * working flow built with the package's exports only.
 */
export function interactionRoutes(deps: InteractionDeps): Router {
  const { provider, accounts, loginCodes, serviceName } = deps;
  const { ipLimits } = loginCodes;
  const router = new Router();
  const linkFirst = deps.upstreams && createLinkFirst({
    store: deps.store, accounts, upstreams: deps.upstreams, passkeys: deps.passkeys, securityNotice: deps.securityNotice, sharedSignals: deps.sharedSignals,
    logger: deps.logger, serviceName, issuer: () => provider.issuer,
    sendCode: (ctx, s, email) => code.send(ctx, s, email),
  });
  const kit = createInteractionKit({ provider, serviceName, secret: deps.secret, ipLimits, passkeys: deps.passkeys, upstreams: deps.upstreams, waiting: linkFirst });

  router.use(htmlErrors(serviceName, () => provider.issuer));

  const code = codeSignIn(router, kit, { accounts, loginCodes, mailer: deps.mailer, serviceName });
  if (deps.passkeys) passkeyInteractionRoutes(router, kit, { ...deps.passkeys, accounts, ipLimits, logger: deps.logger, serviceName, issuer: () => provider.issuer });
  if (deps.upstreams && linkFirst) {
    upstreamInteractionRoutes(router, kit, { ...deps.upstreams, accounts, ipLimits, logger: deps.logger, issuer: () => provider.issuer, linkFirst, securityNotice: deps.securityNotice, sharedSignals: deps.sharedSignals, upstreamHeld: deps.upstreamHeld });
    linkFirst.routes(router, kit);
  }

  router.get('/interaction/:uid', async (ctx) => {
    const s = await kit.load(ctx);
    const { prompt, session } = s.details;
    const signingIn = prompt.name === 'login' || (prompt.name === SELECT_ACCOUNT && ctx.query.account === 'other');
    if (signingIn || prompt.name === SELECT_ACCOUNT) {
      if (await code.showPending(ctx, s)) return;
      if (linkFirst && await linkFirst.show(ctx, kit, s)) return;
      if (signingIn) {
        // No way in here reaches what the site asked for (strength.ts).
        if (!WAYS.some((way) => kit.offers(s, way))) await kit.unmet(ctx);
        else await kit.renderLogin(ctx, s);
        return;
      }
      const account = session?.accountId ? await accounts.get(session.accountId) : undefined;
      sendPage(ctx, selectAccountPage({
        locale: s.locale, serviceName, csrf: s.csrf, accountEmail: accountLabel(account),
        action: `${s.base}/select`, otherHref: `${s.base}?account=other`, formAction: s.formAction,
      }));
      return;
    }
    if (prompt.name === 'consent') {
      const account = session?.accountId ? await accounts.get(session.accountId) : undefined;
      const missing = prompt.details.missingOIDCScope as string[] | undefined;
      const scopes = missing ?? String(s.details.params.scope ?? '').split(' ').filter(Boolean);
      sendPage(ctx, consentPage({
        locale: s.locale, serviceName, csrf: s.csrf,
        clientName: s.clientName,
        clientUri: s.client?.clientUri,
        scopes,
        claims: prompt.details.missingOIDCClaims as string[] | undefined,
        offlineAccess: scopes.includes('offline_access'),
        accountEmail: accountLabel(account) || undefined,
        action: `${s.base}/confirm`, abortAction: `${s.base}/abort`, formAction: s.formAction,
      }));
      return;
    }
    throw new errors.InvalidRequest(`unsupported prompt ${prompt.name}`);
  });

  router.post('/interaction/:uid/select', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    if (s.details.prompt.name !== SELECT_ACCOUNT || !s.details.session) throw new errors.InvalidRequest('nothing to select');
    await kit.finish(ctx, { [SELECT_ACCOUNT]: {} });
  });

  router.post('/interaction/:uid/confirm', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    const { prompt, params, session, grantId } = s.details;
    if (prompt.name !== 'consent' || !session) throw new errors.InvalidRequest('nothing to consent to');
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: String(params.client_id) });
    if (!grant) throw new errors.InvalidRequest('grant not found');
    const details = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const savedId = await grant.save();
    await kit.finish(ctx, { consent: grantId ? {} : { grantId: savedId } });
  });

  // "I cannot" on a sign-in page that offers only the ways the site asked for.
  router.post('/interaction/:uid/unmet', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    if (!s.needed) throw new errors.InvalidRequest('the site asked for no particular way of signing in');
    await kit.unmet(ctx);
  });

  router.post('/interaction/:uid/abort', async (ctx) => {
    await kit.loadForm(ctx);
    await kit.finish(ctx, { error: 'access_denied', error_description: 'the person denied access' });
  });

  return router;
}
