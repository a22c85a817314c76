/**
 * What every way in of a sign-in shares (the emailed code, passkeys,
 * upstreams): the interaction as its pages see it, its forms with their CSRF
 * token, the sign-in page with every way offered, the end of the sign-in,
 * and the IP's limits said in the reader's words.
 */
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { errors } from 'oidc-provider';

import { createCsrf, negotiateLocale, readForm, sendPage, t, type Locale } from '../../src/pages.ts';
import { browserId } from './browser-id.ts';
import type { IpLimits } from './ip-limits.ts';
import type { Refusal } from './login-codes.ts';
import type { PasskeySupport, UpstreamSupport } from './sign-in-support.ts';
import { ACR_OF, allows, requirement, type Requirement, type Way } from './strength.ts';
import { loginPage } from './views/interaction/login.ts';
import { formatWait } from './views/wait.ts';

/** The prompts this sign-in answers; `select_account` is the reference provider's own (provider.ts). */
export const SELECT_ACCOUNT = 'select_account';

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
  /** What the site asked of the sign-in's strength (strength.ts), if anything. */
  needed: Requirement | undefined;
}

/** What the sign-in page says besides its ways in: the address typed, its error, another way's failure. */
export interface LoginExtra {
  email?: string | undefined;
  error?: string | undefined;
  alert?: string | undefined;
  /** A passkey nobody has: the browser is told to forget it. */
  unknownCredential?: string | undefined;
}

/** What the ways in (code-sign-in.ts, passkey-routes.ts, upstream-routes.ts) share. */
export interface InteractionKit {
  load(ctx: Context): Promise<InteractionState>;
  /** A form POST of the interaction: its state, its fields, its CSRF token checked. */
  loadForm(ctx: Context): Promise<{ s: InteractionState; form: Record<string, string> }>;
  /** Hands the result to oidc-provider and follows it (303). */
  finish(ctx: Context, result: InteractionResults): Promise<void>;
  /**
   * The person proved who they are, one way or another: the login result
   * with that way's acr and the amr it gives (and, when asked, the choice of
   * account). A way the site's request does not allow finishes nothing.
   */
  signedIn(ctx: Context, s: InteractionState, login: { accountId: string; way: Way; amr: string[]; upstream?: string | undefined }): Promise<void>;
  /** Whether this sign-in offers a way in (the site may have asked for another: strength.ts). */
  offers(s: InteractionState, way: Way): boolean;
  /** None of the ways the site's request allows can be offered here: the site is answered `unmet_authentication_requirements`. */
  unmet(ctx: Context): Promise<void>;
  renderLogin(ctx: Context, s: InteractionState, extra?: LoginExtra, status?: number): Promise<void>;
  /** The refusal in words that say what happened and for how long, with Retry-After (the caller answers 429). */
  refusal(ctx: Context, s: InteractionState, r: Refusal): string;
  /** "Too many sign-in attempts from your network. Try again in N minutes.", with Retry-After. */
  wait(ctx: Context, s: InteractionState, ms: number): string;
  /** That message (with Retry-After) when the IP has spent its sign-in checks, counting nothing; else undefined. */
  busy(ctx: Context, s: InteractionState): Promise<string | undefined>;
}

/** A link that waits for the account's proof (upstream-link-first.ts). */
export interface WaitingLinks {
  peek(uid: string): Promise<{ accountId: string } | undefined>;
  /** Takes it: linked when it is this account's; the upstream's amr then. */
  settle(uid: string, accountId: string): Promise<string[] | undefined>;
}

export interface InteractionKitDeps {
  provider: Provider;
  serviceName: string;
  /** Key for the forms' CSRF tokens and the browser id cookie. */
  secret: string;
  ipLimits: IpLimits;
  passkeys?: PasskeySupport | undefined;
  upstreams?: UpstreamSupport | undefined;
  /** Upstream sign-ins that wait for the proof of an account (set once the routes exist). */
  waiting?: WaitingLinks | undefined;
}

/**
 * Every step finishes with `mergeWithLastSubmission: true`: the provider
 * keeps what earlier steps of the same authorization request decided (the
 * sign-in of `prompt=login`, the consent), so every combination of prompts
 * ends in one pass (KNOWN-TRAPS 16).
 */
export function createInteractionKit(deps: InteractionKitDeps): InteractionKit {
  const { provider, serviceName } = deps;
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
      needed: requirement(details.params),
    };
  }

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

  const requested = (s: InteractionState, prompt: string) => String(s.details.params.prompt ?? '').split(' ').includes(prompt);

  const offers = (s: InteractionState, way: Way) => allows(s.needed, way)
    && (way === 'code' || (way === 'passkey' ? !!deps.passkeys : !!deps.upstreams));

  /**
   * A code or a passkey that proves the account an upstream sign-in waits
   * for links it (upstream-link-first.ts): the sign-in then carries both
   * amr, and the way that proved it, or the upstream's where the site's
   * request does not allow that way.
   */
  async function signedIn(ctx: Context, s: InteractionState, login: { accountId: string; way: Way; amr: string[]; upstream?: string | undefined }) {
    const waiting = deps.waiting && login.way !== 'upstream' ? await deps.waiting.peek(s.uid) : undefined;
    const proves = waiting?.accountId === login.accountId;
    const way: Way = proves && !allows(s.needed, login.way) ? 'upstream' : login.way;
    if (!allows(s.needed, way)) throw new errors.InvalidRequest('this way of signing in does not reach the strength the site asked for');
    const linked = waiting ? await deps.waiting!.settle(s.uid, login.accountId) : undefined;
    const amr = linked ? [...new Set([...login.amr, ...linked])] : login.amr;
    return finish(ctx, {
      // `upstream`: the plugin records that the session signed in through it (its session-revoked ends the session).
      login: { accountId: login.accountId, acr: ACR_OF[way], amr, ...(login.upstream ? { upstream: login.upstream } : {}) },
      // Signing in here was the choice of account.
      ...(requested(s, SELECT_ACCOUNT) ? { [SELECT_ACCOUNT]: {} } : {}),
    });
  }

  // OpenID Connect Core 5.5.1.1, and the Unmet Authentication Requirements 1.0 error.
  const unmet = (ctx: Context) => finish(ctx, { error: 'unmet_authentication_requirements', error_description: 'the sign-in the site asked for cannot be done here' });

  async function renderLogin(ctx: Context, s: InteractionState, extra: LoginExtra = {}, status = 200) {
    const passkeys = offers(s, 'passkey') ? deps.passkeys : undefined;
    const upstreams = offers(s, 'upstream') ? deps.upstreams : undefined;
    sendPage(ctx, loginPage({
      locale: s.locale, serviceName, clientName: s.clientName, csrf: s.csrf,
      action: offers(s, 'code') ? `${s.base}/email` : undefined,
      strength: s.needed && { cancelAction: `${s.base}/unmet` },
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

  function refusal(ctx: Context, s: InteractionState, r: Refusal): string {
    ctx.set('Retry-After', String(Math.ceil(r.retryAfterMs / 1000)));
    const wait = formatWait(s.locale, r.retryAfterMs);
    if (r.refused === 'locked') return t(s.locale, 'code.error.locked', { wait });
    if (r.refused === 'address') return t(s.locale, 'login.error.rate_limited', { wait });
    return t(s.locale, 'login.error.ip_limited', { wait });
  }

  const wait = (ctx: Context, s: InteractionState, ms: number) => refusal(ctx, s, { refused: 'ip', retryAfterMs: ms });
  const busy = async (ctx: Context, s: InteractionState) => {
    const ms = await deps.ipLimits.wait('checks', ctx.ip);
    return ms > 0 ? wait(ctx, s, ms) : undefined;
  };

  return { load, loadForm, finish, signedIn, offers, unmet, renderLogin, refusal, wait, busy };
}
