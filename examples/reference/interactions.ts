import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import { negotiateLocale, t, type Locale } from '../../src/i18n/index.ts';
import { readForm } from '../../src/http/body.ts';
import { createCsrf } from '../../src/http/csrf.ts';
import type { Mailer } from '../../src/mail/mailer.ts';
import { codePage } from './views/interaction/code.ts';
import { consentPage } from './views/interaction/consent.ts';
import { loginPage } from './views/interaction/login.ts';
import { selectAccountPage } from './views/interaction/select-account.ts';
import { sendPage as send } from '../../src/http/page.ts';
import { htmlErrors } from '../../src/http/error-page.ts';
import { loginCodeLetter } from './views/letters/login-code.ts';
import { formatWait } from './views/wait.ts';
import type { Logger } from '../../src/host.ts';
import { accountLabel, type Accounts } from './accounts.ts';
import { browserId } from './browser-id.ts';
import type { LoginCodes, Refusal } from './login-codes.ts';
import { passkeyInteractionRoutes, type PasskeySupport } from './passkey-routes.ts';
import { upstreamInteractionRoutes, type UpstreamSupport } from './upstream-routes.ts';

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
}

const emailSchema = z.string().trim().max(254).email();

/** The prompts this sign-in answers; `select_account` is the reference provider's own (provider.ts). */
export const SELECT_ACCOUNT = 'select_account';

/**
 * The reference provider's sign-in: email address, emailed 6-digit code,
 * consent, and account selection. Hosts bring their own; this one shows a
 * complete, working flow.
 *
 * Every step finishes with `mergeWithLastSubmission: true`: the provider
 * keeps what earlier steps of the same authorization request decided (the
 * sign-in of `prompt=login`, the consent), so every combination of prompts
 * ends in one pass (KNOWN-TRAPS 16).
 */
export function interactionRoutes(deps: InteractionDeps): Router {
  const { provider, accounts, loginCodes, mailer, serviceName } = deps;
  const router = new Router();

  const csrf = createCsrf(() => deps.secret);
  const browser = browserId(deps.secret);

  async function load(ctx: Context): Promise<InteractionState> {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    // The cookie names the interaction; the URL must name the same one.
    if (ctx.params.uid !== details.uid) throw new errors.SessionNotFound('interaction mismatch');
    const client = await provider.Client.find(String(details.params.client_id));
    const locale: Locale = negotiateLocale({
      uiLocales: typeof details.params.ui_locales === 'string' ? details.params.ui_locales : undefined,
      acceptLanguage: ctx.get('accept-language'),
    });
    // Chrome applies form-action to the redirect after a POST: allow the
    // client's own redirect targets, nothing else.
    const formAction = [...(client?.redirectUris ?? [])];
    const base = `/interaction/${details.uid}`;
    return {
      details, client, locale, formAction, uid: details.uid, base,
      csrf: csrf.token('interaction', details.uid),
      device: browser.of(ctx),
      clientName: client?.clientName ?? String(details.params.client_id),
    };
  }
  type State = InteractionState;
  type LoginExtra = { email?: string | undefined; error?: string; alert?: string; unknownCredential?: string };

  /** A form POST of the interaction: its state, its fields, its CSRF token checked. */
  async function loadForm(ctx: Context) {
    const s = await load(ctx);
    const form = await readForm(ctx);
    csrf.verify('interaction', s.uid, form.csrf);
    return { s, form };
  }

  async function finish(ctx: Context, result: InteractionResults) {
    const redirectTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(redirectTo);
  }

  const requested = (s: State, prompt: string) => String(s.details.params.prompt ?? '').split(' ').includes(prompt);

  /** The person proved who they are, one way or another: the login result (and, when asked, the choice of account). */
  function signedIn(ctx: Context, s: State, login: { accountId: string; amr?: string[] }) {
    return finish(ctx, {
      login,
      // Signing in here was the choice of account.
      ...(requested(s, SELECT_ACCOUNT) ? { [SELECT_ACCOUNT]: {} } : {}),
    });
  }

  async function renderLogin(ctx: Context, s: State, extra: LoginExtra = {}, status = 200) {
    const { passkeys, upstreams } = deps;
    send(ctx, loginPage({
      locale: s.locale, serviceName, clientName: s.clientName, csrf: s.csrf,
      action: `${s.base}/email`,
      formAction: [...s.formAction, ...(upstreams ? upstreams.clients.formTargets() : [])],
      passkeys: passkeys && {
        script: new URL(passkeys.script, provider.issuer).href, rpId: passkeys.rp.id,
        optionsAction: `${s.base}/passkey/options`, action: `${s.base}/passkey`, signUpHref: `${s.base}/passkey/new`,
        unknownCredential: extra.unknownCredential,
      },
      upstreams: upstreams?.clients.list.map((u) => ({ name: u.name, action: `${s.base}/upstream/${u.id}` })),
      email: extra.email, error: extra.error, alert: extra.alert,
    }), status);
  }

  function renderCode(ctx: Context, s: State, view: { email: string; usable?: boolean; error?: string; resent?: boolean }, status = 200) {
    send(ctx, codePage({
      locale: s.locale, serviceName, csrf: s.csrf, ...view,
      minutes: Math.round(loginCodes.limits.ttlMs / 60_000),
      action: `${s.base}/code`, resendAction: `${s.base}/resend`, restartAction: `${s.base}/restart`, formAction: s.formAction,
    }), status);
  }

  /** The refusal in words that say what happened and for how long; 429 with Retry-After. */
  function refusal(ctx: Context, s: State, r: Refusal): string {
    ctx.set('Retry-After', String(Math.ceil(r.retryAfterMs / 1000)));
    const wait = formatWait(s.locale, r.retryAfterMs);
    if (r.refused === 'locked') return t(s.locale, 'code.error.locked', { wait });
    if (r.refused === 'address') return t(s.locale, 'login.error.rate_limited', { wait });
    return t(s.locale, 'login.error.ip_limited', { wait });
  }

  /** Sends a new code to the address; the refusal when the limits say no. */
  async function sendCode(ctx: Context, s: State, email: string): Promise<Refusal | undefined> {
    const issued = await loginCodes.issue(s.uid, email, ctx.ip, s.device);
    if ('refused' in issued) return issued;
    const account = await accounts.findByEmail(email);
    const letter = loginCodeLetter({
      locale: negotiateLocale({ preferred: account?.locale }, s.locale),
      code: issued.code, serviceName, clientName: s.clientName,
      minutes: Math.round(loginCodes.limits.ttlMs / 60_000),
    });
    await mailer.send({ to: email, ...letter });
    return undefined;
  }

  router.use(htmlErrors(serviceName, () => provider.issuer));

  router.get('/interaction/:uid', async (ctx) => {
    const s = await load(ctx);
    const { prompt, session } = s.details;
    const signingIn = prompt.name === 'login' || (prompt.name === SELECT_ACCOUNT && ctx.query.account === 'other');
    if (signingIn || prompt.name === SELECT_ACCOUNT) {
      const pending = await loginCodes.pending(s.uid);
      if (pending) {
        renderCode(ctx, s, {
          email: pending.email, usable: pending.usable, resent: ctx.query.sent === 'again',
          ...(pending.usable ? {} : { error: t(s.locale, 'code.error.unusable') }),
        });
        return;
      }
      if (signingIn) {
        await renderLogin(ctx, s);
        return;
      }
      const account = session?.accountId ? await accounts.get(session.accountId) : undefined;
      send(ctx, selectAccountPage({
        locale: s.locale, serviceName, csrf: s.csrf, accountEmail: accountLabel(account),
        action: `${s.base}/select`, otherHref: `${s.base}?account=other`, formAction: s.formAction,
      }));
      return;
    }
    if (prompt.name === 'consent') {
      const account = session?.accountId ? await accounts.get(session.accountId) : undefined;
      const missing = prompt.details.missingOIDCScope as string[] | undefined;
      const scopes = missing ?? String(s.details.params.scope ?? '').split(' ').filter(Boolean);
      send(ctx, consentPage({
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

  router.post('/interaction/:uid/email', async (ctx) => {
    const { s, form } = await loadForm(ctx);
    const parsed = emailSchema.safeParse(form.email ?? '');
    if (!parsed.success) {
      await renderLogin(ctx, s, { email: form.email, error: t(s.locale, 'login.error.invalid_email') }, 400);
      return;
    }
    const email = parsed.data.toLowerCase();
    const refused = await sendCode(ctx, s, email);
    if (refused) {
      await renderLogin(ctx, s, { email, error: refusal(ctx, s, refused) }, 429);
      return;
    }
    ctx.status = 303;
    ctx.redirect(s.base);
  });

  router.post('/interaction/:uid/resend', async (ctx) => {
    const { s } = await loadForm(ctx);
    const pending = await loginCodes.pending(s.uid);
    if (!pending) {
      await renderLogin(ctx, s, { error: t(s.locale, 'code.error.missing') }, 400);
      return;
    }
    const refused = await sendCode(ctx, s, pending.email);
    if (refused) {
      renderCode(ctx, s, { ...pending, error: refusal(ctx, s, refused) }, 429);
      return;
    }
    ctx.status = 303;
    ctx.redirect(`${s.base}?sent=again`);
  });

  router.post('/interaction/:uid/restart', async (ctx) => {
    const { s } = await loadForm(ctx);
    await loginCodes.cancel(s.uid);
    ctx.status = 303;
    ctx.redirect(s.details.prompt.name === SELECT_ACCOUNT ? `${s.base}?account=other` : s.base);
  });

  router.post('/interaction/:uid/code', async (ctx) => {
    const { s, form } = await loadForm(ctx);
    const result = await loginCodes.verify(s.uid, form.code ?? '', ctx.ip, s.device);
    if ('refused' in result) {
      const pending = await loginCodes.pending(s.uid);
      const error = refusal(ctx, s, result);
      if (pending) renderCode(ctx, s, { ...pending, error }, 429);
      else await renderLogin(ctx, s, { error }, 429);
      return;
    }
    if ('error' in result) {
      if (result.error === 'missing') await renderLogin(ctx, s, { error: t(s.locale, 'code.error.missing') }, 400);
      else if (result.error === 'expired') renderCode(ctx, s, { email: result.email, usable: false, error: t(s.locale, 'code.error.expired') }, 400);
      else if (result.attemptsLeft > 0) renderCode(ctx, s, { email: result.email, error: t(s.locale, 'code.error.invalid', { count: result.attemptsLeft }) }, 400);
      else renderCode(ctx, s, { email: result.email, usable: false, error: t(s.locale, 'code.error.used_up') }, 400);
      return;
    }
    // The language the pages were shown in becomes the account's at its first sign-in.
    const account = await accounts.findOrCreate(result.email, { locale: s.locale });
    await signedIn(ctx, s, { accountId: account.accountId, amr: ['otp'] });
  });

  router.post('/interaction/:uid/select', async (ctx) => {
    const { s } = await loadForm(ctx);
    if (s.details.prompt.name !== SELECT_ACCOUNT || !s.details.session) throw new errors.InvalidRequest('nothing to select');
    await finish(ctx, { [SELECT_ACCOUNT]: {} });
  });

  router.post('/interaction/:uid/confirm', async (ctx) => {
    const { s } = await loadForm(ctx);
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
    await finish(ctx, { consent: grantId ? {} : { grantId: savedId } });
  });

  router.post('/interaction/:uid/abort', async (ctx) => {
    await loadForm(ctx);
    await finish(ctx, { error: 'access_denied', error_description: 'the person denied access' });
  });

  const wait = (ctx: Context, s: InteractionState, ms: number) => refusal(ctx, s, { refused: 'ip', retryAfterMs: ms });
  const busy = async (ctx: Context, s: InteractionState) => {
    const ms = await loginCodes.ipLimits.wait('checks', ctx.ip);
    return ms > 0 ? wait(ctx, s, ms) : undefined;
  };
  const kit: InteractionKit = { load, loadForm, signedIn, renderLogin, wait, busy };
  if (deps.passkeys) passkeyInteractionRoutes(router, kit, { ...deps.passkeys, accounts, ipLimits: loginCodes.ipLimits, logger: deps.logger, serviceName, issuer: () => provider.issuer });
  if (deps.upstreams) upstreamInteractionRoutes(router, kit, { ...deps.upstreams, accounts, ipLimits: loginCodes.ipLimits, logger: deps.logger, issuer: () => provider.issuer });

  return router;
}

/** A sign-in interaction as its pages see it (`load`). */
export interface InteractionState {
  uid: string;
  /** `/interaction/<uid>`: its pages' address. */
  base: string;
  locale: Locale;
  /** The CSRF token of its forms. */
  csrf: string;
  /** Where its forms may be redirected (the site's redirect URIs). */
  formAction: string[];
  details: Awaited<ReturnType<Provider['interactionDetails']>>;
  client: Awaited<ReturnType<Provider['Client']['find']>>;
  clientName: string;
  /** The browser's id (browser-id.ts). */
  device: string;
}

/** What the other ways in (passkey-routes.ts, upstream-routes.ts) share with the code's pages. */
export interface InteractionKit {
  load(ctx: Context): Promise<InteractionState>;
  loadForm(ctx: Context): Promise<{ s: InteractionState; form: Record<string, string> }>;
  signedIn(ctx: Context, s: InteractionState, login: { accountId: string; amr?: string[] }): Promise<void>;
  renderLogin(ctx: Context, s: InteractionState, extra?: { alert?: string; unknownCredential?: string }, status?: number): Promise<void>;
  /** "Too many sign-in attempts from your network. Try again in N minutes.", with Retry-After. */
  wait(ctx: Context, s: InteractionState, ms: number): string;
  /** That message (with Retry-After) when the IP has spent its sign-in checks, counting nothing; else undefined. */
  busy(ctx: Context, s: InteractionState): Promise<string | undefined>;
}
