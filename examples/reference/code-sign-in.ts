/**
 * Sign-in by emailed code: the address, the 6-digit code it is sent, "Send a
 * new code" and "Use a different email address", within the limits of
 * login-codes.ts. The reference provider's own way in; a host brings its own.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import type { Mailer } from '../../src/index.ts';
import { negotiateLocale, sendPage, t } from '../../src/pages.ts';
import { normalizeEmail, type Accounts } from './accounts.ts';
import { SELECT_ACCOUNT, type InteractionKit, type InteractionState } from './interaction-kit.ts';
import type { LoginCodes, Refusal } from './login-codes.ts';
import { codePage } from './views/interaction/code.ts';
import { loginCodeLetter } from './views/letters/login-code.ts';

export interface CodeSignInDeps {
  accounts: Accounts;
  loginCodes: LoginCodes;
  mailer: Mailer;
  serviceName: string;
}

const emailSchema = z.string().trim().max(254).email();

/**
 * The code's routes under `/interaction/<uid>/`; answers the code page of a
 * sign-in that has its address already (`showPending`).
 */
export function codeSignIn(router: Router, kit: InteractionKit, deps: CodeSignInDeps) {
  const { accounts, loginCodes, mailer, serviceName } = deps;
  const minutes = Math.round(loginCodes.limits.ttlMs / 60_000);

  function renderCode(ctx: Context, s: InteractionState, view: { email: string; usable?: boolean; error?: string; resent?: boolean }, status = 200) {
    sendPage(ctx, codePage({
      locale: s.locale, serviceName, csrf: s.csrf, ...view, minutes,
      action: `${s.base}/code`, resendAction: `${s.base}/resend`, restartAction: `${s.base}/restart`, formAction: s.formAction,
    }), status);
  }

  /** Sends a new code to the address; the refusal when the limits say no. */
  async function sendCode(ctx: Context, s: InteractionState, email: string): Promise<Refusal | undefined> {
    const issued = await loginCodes.issue(s.uid, email, ctx.ip, s.device);
    if ('refused' in issued) return issued;
    const account = await accounts.findByEmail(email);
    const letter = loginCodeLetter({
      locale: negotiateLocale({ preferred: account?.locale }, s.locale),
      code: issued.code, serviceName, clientName: s.clientName, minutes,
    });
    await mailer.send({ to: email, ...letter });
    return undefined;
  }

  router.post('/interaction/:uid/email', async (ctx) => {
    const { s, form } = await kit.loadForm(ctx);
    // No letter for a sign-in the site asked another way of (strength.ts).
    if (!kit.offers(s, 'code')) throw new errors.InvalidRequest('the site asked for another way of signing in');
    const parsed = emailSchema.safeParse(form.email ?? '');
    if (!parsed.success) {
      await kit.renderLogin(ctx, s, { email: form.email, error: t(s.locale, 'login.error.invalid_email') }, 400);
      return;
    }
    // An address that is an account's (compared by addressKey) gets its code at the account's own address.
    const email = (await accounts.findByEmail(parsed.data))?.email ?? normalizeEmail(parsed.data);
    const refused = await sendCode(ctx, s, email);
    if (refused) {
      await kit.renderLogin(ctx, s, { email, error: kit.refusal(ctx, s, refused) }, 429);
      return;
    }
    ctx.status = 303;
    ctx.redirect(s.base);
  });

  router.post('/interaction/:uid/resend', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    const pending = await loginCodes.pending(s.uid);
    if (!pending) {
      await kit.renderLogin(ctx, s, { error: t(s.locale, 'code.error.missing') }, 400);
      return;
    }
    const refused = await sendCode(ctx, s, pending.email);
    if (refused) {
      renderCode(ctx, s, { ...pending, error: kit.refusal(ctx, s, refused) }, 429);
      return;
    }
    ctx.status = 303;
    ctx.redirect(`${s.base}?sent=again`);
  });

  router.post('/interaction/:uid/restart', async (ctx) => {
    const { s } = await kit.loadForm(ctx);
    await loginCodes.cancel(s.uid);
    ctx.status = 303;
    ctx.redirect(s.details.prompt.name === SELECT_ACCOUNT ? `${s.base}?account=other` : s.base);
  });

  router.post('/interaction/:uid/code', async (ctx) => {
    const { s, form } = await kit.loadForm(ctx);
    const result = await loginCodes.verify(s.uid, form.code ?? '', ctx.ip, s.device);
    if ('refused' in result) {
      const pending = await loginCodes.pending(s.uid);
      const error = kit.refusal(ctx, s, result);
      if (pending) renderCode(ctx, s, { ...pending, error }, 429);
      else await kit.renderLogin(ctx, s, { error }, 429);
      return;
    }
    if ('error' in result) {
      if (result.error === 'missing') await kit.renderLogin(ctx, s, { error: t(s.locale, 'code.error.missing') }, 400);
      else if (result.error === 'expired') renderCode(ctx, s, { email: result.email, usable: false, error: t(s.locale, 'code.error.expired') }, 400);
      else if (result.attemptsLeft > 0) renderCode(ctx, s, { email: result.email, error: t(s.locale, 'code.error.invalid', { count: result.attemptsLeft }) }, 400);
      else renderCode(ctx, s, { email: result.email, usable: false, error: t(s.locale, 'code.error.used_up') }, 400);
      return;
    }
    // The language the pages were shown in becomes the account's at its first sign-in.
    const account = await accounts.findOrCreate(result.email, { locale: s.locale });
    // RFC 8176: a one-time password (the emailed code).
    await kit.signedIn(ctx, s, { accountId: account.accountId, way: 'code', amr: ['otp'] });
  });

  return {
    /** Sends a code to the address (the link page's "Email me a code"): the refusal's sentence, with Retry-After, when the limits say no. */
    async send(ctx: Context, s: InteractionState, email: string): Promise<string | undefined> {
      const refused = await sendCode(ctx, s, email);
      return refused && kit.refusal(ctx, s, refused);
    },
    /** Shows the code page when the sign-in has its address already; false when it has none. */
    async showPending(ctx: Context, s: InteractionState): Promise<boolean> {
      const pending = await loginCodes.pending(s.uid);
      if (!pending) return false;
      renderCode(ctx, s, {
        email: pending.email, usable: pending.usable, resent: ctx.query.sent === 'again',
        ...(pending.usable ? {} : { error: t(s.locale, 'code.error.unusable') }),
      });
      return true;
    },
  };
}
