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
import { codePage } from '../../views/interaction/code.ts';
import { consentPage } from '../../views/interaction/consent.ts';
import { loginPage } from '../../views/interaction/login.ts';
import { htmlErrors, sendPage as send } from '../../src/http/page.ts';
import { loginCodeLetter } from '../../views/letters/login-code.ts';
import type { Accounts } from './accounts.ts';
import type { LoginCodes } from './login-codes.ts';

export interface InteractionDeps {
  provider: Provider;
  accounts: Accounts;
  loginCodes: LoginCodes;
  mailer: Mailer;
  serviceName: string;
  /** Key for the forms' CSRF tokens. */
  secret: string;
}

const emailSchema = z.string().trim().max(254).email();

/**
 * The reference provider's sign-in: email address, emailed 6-digit code,
 * consent. Hosts bring their own; this one shows a complete, working flow.
 */
export function interactionRoutes(deps: InteractionDeps): Router {
  const { provider, accounts, loginCodes, mailer, serviceName } = deps;
  const router = new Router();

  const csrf = createCsrf(() => deps.secret);

  async function load(ctx: Context) {
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
    return { details, client, locale, formAction, uid: details.uid, csrf: csrf.token('interaction', details.uid) };
  }

  /** A form POST of the interaction: its state, its fields, its CSRF token checked. */
  async function loadForm(ctx: Context) {
    const s = await load(ctx);
    const form = await readForm(ctx);
    csrf.verify('interaction', s.uid, form.csrf);
    return { s, form };
  }

  async function finish(ctx: Context, result: InteractionResults) {
    const redirectTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(redirectTo);
  }

  function renderLogin(ctx: Context, s: Awaited<ReturnType<typeof load>>, extra: { email?: string; error?: string } = {}, status = 200) {
    send(ctx, loginPage({
      locale: s.locale, serviceName, clientName: s.client?.clientName, csrf: s.csrf,
      action: `/interaction/${s.uid}/email`, formAction: s.formAction, ...extra,
    }), status);
  }

  function renderCode(ctx: Context, s: Awaited<ReturnType<typeof load>>, email: string, error?: string, status = 200) {
    send(ctx, codePage({
      locale: s.locale, serviceName, csrf: s.csrf, email, error,
      action: `/interaction/${s.uid}/code`, resendAction: `/interaction/${s.uid}/restart`, formAction: s.formAction,
    }), status);
  }

  router.use(htmlErrors(serviceName));

  router.get('/interaction/:uid', async (ctx) => {
    const s = await load(ctx);
    if (s.details.prompt.name === 'login') {
      const pending = await loginCodes.pendingEmail(s.uid);
      if (pending) renderCode(ctx, s, pending);
      else renderLogin(ctx, s);
      return;
    }
    if (s.details.prompt.name === 'consent') {
      const { details: { prompt, session } } = s;
      const account = session?.accountId ? await accounts.get(session.accountId) : undefined;
      const missing = prompt.details.missingOIDCScope as string[] | undefined;
      const scopes = missing ?? String(s.details.params.scope ?? '').split(' ').filter(Boolean);
      send(ctx, consentPage({
        locale: s.locale, serviceName, csrf: s.csrf,
        clientName: s.client?.clientName ?? String(s.details.params.client_id),
        clientUri: s.client?.clientUri,
        scopes,
        claims: prompt.details.missingOIDCClaims as string[] | undefined,
        offlineAccess: scopes.includes('offline_access'),
        accountEmail: account?.email,
        action: `/interaction/${s.uid}/confirm`, abortAction: `/interaction/${s.uid}/abort`, formAction: s.formAction,
      }));
      return;
    }
    throw new errors.InvalidRequest(`unsupported prompt ${s.details.prompt.name}`);
  });

  router.post('/interaction/:uid/email', async (ctx) => {
    const { s, form } = await loadForm(ctx);
    const parsed = emailSchema.safeParse(form.email ?? '');
    if (!parsed.success) {
      renderLogin(ctx, s, { email: form.email, error: t(s.locale, 'login.error.invalid_email') }, 400);
      return;
    }
    const email = parsed.data.toLowerCase();
    const issued = await loginCodes.issue(s.uid, email, ctx.ip);
    if ('retryAfterMs' in issued) {
      ctx.set('Retry-After', String(Math.ceil(issued.retryAfterMs / 1000)));
      renderLogin(ctx, s, { email, error: t(s.locale, 'login.error.rate_limited') }, 429);
      return;
    }
    const account = await accounts.findByEmail(email);
    const letter = loginCodeLetter({ locale: negotiateLocale({ preferred: account?.locale }, s.locale), code: issued.code, serviceName });
    await mailer.send({ to: email, ...letter });
    ctx.status = 303;
    ctx.redirect(`/interaction/${s.uid}`);
  });

  router.post('/interaction/:uid/restart', async (ctx) => {
    const { s, form } = await loadForm(ctx);
    await loginCodes.cancel(s.uid);
    ctx.status = 303;
    ctx.redirect(`/interaction/${s.uid}`);
  });

  router.post('/interaction/:uid/code', async (ctx) => {
    const { s, form } = await loadForm(ctx);
    const email = await loginCodes.pendingEmail(s.uid);
    const result = await loginCodes.verify(s.uid, form.code ?? '');
    if ('error' in result) {
      if (result.error === 'invalid' && email) renderCode(ctx, s, email, t(s.locale, 'code.error.invalid'), 400);
      else renderLogin(ctx, s, { email, error: t(s.locale, 'code.error.expired') }, 400);
      return;
    }
    const account = await accounts.findOrCreate(result.email);
    await finish(ctx, { login: { accountId: account.accountId, amr: ['otp'] } });
  });

  router.post('/interaction/:uid/confirm', async (ctx) => {
    const { s, form } = await loadForm(ctx);
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
    const { s, form } = await loadForm(ctx);
    await finish(ctx, { error: 'access_denied', error_description: 'the person denied access' });
  });

  return router;
}
