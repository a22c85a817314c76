import { randomUUID } from 'node:crypto';

import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from 'oidc-provider';
import { z } from 'zod';

import type { Logger } from '../../src/index.ts';
import { errorSentence, sendPage, t, type Locale, type MessageKey } from '../../src/pages.ts';
import { looksLikeAddress, type Accounts } from './accounts.ts';
import type { InteractionKit, InteractionState } from './interaction-kit.ts';
import type { IpLimits } from './ip-limits.ts';
import type { PasskeySupport } from './sign-in-support.ts';
import { passkeyAmr } from './strength.ts';
import { passkeySignUpPage } from './views/interaction/passkey-signup.ts';
import { authenticationOptions, parseAuthentication, parseRegistration, registrationOptions, userHandle, verifyAuthentication, verifyRegistration } from './webauthn.ts';

/** A name people give (an account's, a passkey's): trimmed, 1-64 characters, no control characters. */
export const nameSchema = z.string().trim().min(1).max(64).regex(/^[^\p{Cc}\p{Cf}]*$/u);

/**
 * Answers a script's request for WebAuthn options with JSON: the options, or
 * `{ error, message }` in the reader's language (the page shows the message),
 * with `location` where the person must go first (a fresh sign-in).
 */
export async function jsonOptions(ctx: Context, locale: () => Locale | undefined, work: () => Promise<unknown>): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  try {
    ctx.body = await work();
  } catch (err) {
    if (!(err instanceof errors.OIDCProviderError)) throw err;
    ctx.status = err.statusCode;
    const given = err as { error: string; messageKey?: MessageKey; message: string; shown?: string; location?: string };
    const sentence = errorSentence(locale() ?? 'en', given, err instanceof errors.SessionNotFound);
    ctx.body = { error: given.error, message: given.shown ?? sentence, ...(given.location ? { location: given.location } : {}) };
  }
}

/** A refusal the script shows as it is: its message is already the person's sentence. */
export function shown(status: number, error: string, message: string): errors.OIDCProviderError {
  return Object.assign(new errors.OIDCProviderError(status, error), { shown: message });
}

interface Deps extends PasskeySupport {
  accounts: Accounts;
  ipLimits: IpLimits;
  logger: Logger;
  serviceName: string;
  issuer: () => string;
}

/**
 * The passkey routes of a sign-in: options and the signed answer (a
 * discoverable credential, so no address is asked), and the sign-up of an
 * account with a passkey only. Challenges are single-use and bound to the
 * interaction; a failed assertion counts against the IP's check limit, as a
 * wrong code does, and the limit is asked before anything is checked.
 */
export function passkeyInteractionRoutes(router: Router, kit: InteractionKit, deps: Deps): void {
  const { store, rp, accounts, ipLimits, logger } = deps;
  const script = () => new URL(deps.script, deps.issuer()).href;

  /** A sign-in that did not work: counted against the IP, said on the page. */
  async function failed(ctx: Context, s: InteractionState, reason: string, key: MessageKey, extra: { unknownCredential?: string } = {}) {
    await ipLimits.hit('checks', ctx.ip);
    logger.warn('passkey sign-in failed', { reason });
    await kit.renderLogin(ctx, s, { alert: t(s.locale, key), ...extra }, 400);
  }

  router.post('/interaction/:uid/passkey/options', async (ctx) => {
    let locale: Locale | undefined;
    await jsonOptions(ctx, () => locale, async () => {
      const { s } = await kit.loadForm(ctx);
      locale = s.locale;
      const busy = await kit.busy(ctx, s);
      if (busy) throw shown(429, 'rate_limited', busy);
      const options = await authenticationOptions(rp);
      await store.putChallenge({ uid: s.uid }, { challenge: options.challenge, purpose: 'sign-in' });
      return options;
    });
  });

  router.post('/interaction/:uid/passkey', async (ctx) => {
    const { s, form } = await kit.loadForm(ctx);
    const busy = await kit.busy(ctx, s);
    if (busy) {
      await kit.renderLogin(ctx, s, { alert: busy }, 429);
      return;
    }
    const [challenge, response] = [await store.takeChallenge({ uid: s.uid }), parseAuthentication(form.response)];
    if (!response) return failed(ctx, s, 'no answer', 'passkey.error.invalid');
    if (!challenge || challenge.purpose !== 'sign-in') return failed(ctx, s, 'no challenge', 'passkey.error.expired');
    const found = await store.find(response.id);
    if (!found) return failed(ctx, s, 'unknown credential', 'passkey.error.unknown', { unknownCredential: response.id });
    const handle = response.response.userHandle;
    if (handle !== undefined && handle !== userHandle(found.accountId)) return failed(ctx, s, 'user handle mismatch', 'passkey.error.invalid');
    const verified = await verifyAuthentication(rp, response, challenge.challenge, found.passkey);
    if (!verified) return failed(ctx, s, 'assertion not verified', 'passkey.error.invalid');
    const used = await store.use(found.accountId, found.passkey.id, verified.counter, verified.backedUp);
    if (used === 'counter') {
      logger.warn('passkey counter did not move forward: a cloned authenticator?', { accountId: found.accountId });
    }
    if (used !== 'ok') return failed(ctx, s, `passkey ${used}`, 'passkey.error.invalid');
    if (!(await accounts.get(found.accountId))) return failed(ctx, s, 'account gone', 'passkey.error.unknown');
    logger.info('signed in with a passkey', { accountId: found.accountId });
    await kit.signedIn(ctx, s, { accountId: found.accountId, way: 'passkey', amr: passkeyAmr({ deviceType: found.passkey.deviceType, backedUp: verified.backedUp }) });
    return undefined;
  });

  function renderSignUp(ctx: Context, s: InteractionState, view: { name?: string; error?: string; alert?: string } = {}, status = 200) {
    sendPage(ctx, passkeySignUpPage({
      locale: s.locale, serviceName: deps.serviceName, csrf: s.csrf, script: script(),
      optionsAction: `${s.base}/passkey/new/options`, action: `${s.base}/passkey/new`, backHref: s.base,
      formAction: s.formAction, ...view,
    }), status);
  }

  router.get('/interaction/:uid/passkey/new', async (ctx) => {
    renderSignUp(ctx, await kit.load(ctx));
  });

  router.post('/interaction/:uid/passkey/new/options', async (ctx) => {
    let locale: Locale | undefined;
    await jsonOptions(ctx, () => locale, async () => {
      const { s, form } = await kit.loadForm(ctx);
      locale = s.locale;
      const name = nameSchema.safeParse(form.name ?? '');
      if (!name.success) throw shown(400, 'invalid_request', t(s.locale, 'passkey.error.name'));
      // The name labels the account where an address would (the console, the account chooser): never one that looks like an address.
      if (looksLikeAddress(name.data)) throw shown(400, 'invalid_request', t(s.locale, 'passkey.error.name_address'));
      // A new account costs what a code letter costs: the IP's request limit.
      const wait = await ipLimits.hit('requests', ctx.ip);
      if (wait > 0) throw shown(429, 'rate_limited', kit.wait(ctx, s, wait));
      const accountId = randomUUID();
      const options = await registrationOptions(rp, { accountId, name: name.data, displayName: name.data }, []);
      await store.putChallenge({ uid: s.uid }, { challenge: options.challenge, purpose: 'sign-up', accountId, name: name.data });
      return options;
    });
  });

  router.post('/interaction/:uid/passkey/new', async (ctx) => {
    const { s, form } = await kit.loadForm(ctx);
    const name = typeof form.name === 'string' ? form.name.slice(0, 64) : undefined;
    const busy = await kit.busy(ctx, s);
    if (busy) return renderSignUp(ctx, s, { name, alert: busy }, 429);
    const challenge = await store.takeChallenge({ uid: s.uid });
    const response = parseRegistration(form.response);
    const refuse = async (reason: string, key: MessageKey) => {
      await ipLimits.hit('checks', ctx.ip);
      logger.warn('passkey sign-up failed', { reason });
      renderSignUp(ctx, s, { name, alert: t(s.locale, key) }, 400);
    };
    if (!challenge || challenge.purpose !== 'sign-up' || !challenge.accountId) return refuse('no challenge', 'passkey.error.expired');
    if (!response) return refuse('no answer', 'passkey.error.create_failed');
    const passkey = await verifyRegistration(rp, response, challenge.challenge, t(s.locale, 'passkey.default_name', { number: 1 }));
    if (!passkey) return refuse('attestation not verified', 'passkey.error.create_failed');
    // The passkey first: an account is only ever written with its way in.
    if (!(await store.add(challenge.accountId, passkey))) return refuse('credential taken', 'passkey.error.create_failed');
    const account = await accounts.create({ accountId: challenge.accountId, name: challenge.name, locale: s.locale });
    logger.info('account created with a passkey', { accountId: account.accountId });
    await kit.signedIn(ctx, s, { accountId: account.accountId, way: 'passkey', amr: passkeyAmr(passkey) });
    return undefined;
  });
}
