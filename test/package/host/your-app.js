// The host's own app, as a team that already runs oidc-provider has it: its
// accounts, clients, keys, cookie keys and a sign-in step of its own (not the
// reference provider's). The consumer test writes this file beside the
// README's snippets in a fresh app; settings come from the environment.
import { createHash, createPrivateKey, timingSafeEqual } from 'node:crypto';

import {
  createCsrf, csrfField, describedBy, errorMessage, html, htmlErrors, negotiateLocale, PluginError, readForm, renderPage, sendPage, t,
} from 'oidc-signout-notify/pages';
import { rateLimit } from 'oidc-signout-notify/store';

const people = new Map([
  ['alice', { email: 'alice@example.com', locale: 'en' }],
  ['bruno', { email: 'bruno@example.com', locale: 'de' }],
]);

export const users = {
  async byId(id) {
    return people.get(id);
  },
};

export const clients = JSON.parse(process.env.HOST_CLIENTS);

export const jwks = {
  keys: [{ ...createPrivateKey(process.env.HOST_SIGNING_KEY).export({ format: 'jwk' }), kid: 'host-1', use: 'sig', alg: 'RS256' }],
};

export const cookies = { keys: [process.env.HOST_COOKIE_KEY] };

export async function findAccount(ctx, id) {
  const person = people.get(id);
  return person && { accountId: id, claims: () => ({ sub: id, email: person.email, email_verified: true }) };
}

export const interactions = { url: (ctx, interaction) => `/interaction/${interaction.uid}` };

// The host's own oidc-provider settings, which configure() keeps.
export const features = { claimsParameter: { enabled: true } };
export const claims = { email: ['email', 'email_verified'] };
export const ttl = { AccessToken: 600 };

const SERVICE_NAME = 'Host Sign-in';
/** Wrong names one sign-in may try before it is refused for a while. */
const WRONG_NAMES = { limit: 2, windowMs: 10 * 60_000 };

/** The host's login page, in the service's look and with its CSP (oidc-signout-notify/pages). */
function loginPage(locale, uid, token, error) {
  const title = t(locale, 'login.title');
  const main = html`<h1>${title}</h1>
<form method="post" action="/interaction/${uid}/login">
${csrfField(token)}
<div class="field">
<label for="login">Your name</label>
${errorMessage('login-error', error)}
<input id="login" name="login" type="text" required${describedBy(error && 'login-error')}>
</div>
<button type="submit" class="primary">${title}</button>
</form>`;
  return renderPage({ locale, title, main, serviceName: SERVICE_NAME });
}

/**
 * The host's sign-in: a name, no password (it is a test host); consent
 * granted as asked. Its page and form are built with oidc-signout-notify/pages
 * (CSRF token, a form read with a size limit, the service's error pages);
 * with the plugin's store, wrong names are counted per sign-in in it
 * (oidc-signout-notify/store). A Koa middleware: on the provider
 * (mountInteractions) or on the host's app ahead of the mount (the README's app.js).
 */
export function interactionRoutes(provider, store) {
  const csrf = createCsrf(() => process.env.HOST_COOKIE_KEY);
  const errorPages = htmlErrors(SERVICE_NAME, () => provider.issuer);
  return async (ctx, next) => {
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(ctx.path);
    if (!match) return next();
    return errorPages(ctx, async () => {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      if (details.uid !== match[1]) throw new PluginError('invalid_request', 'interaction mismatch');
      const locale = negotiateLocale({ uiLocales: details.params.ui_locales, acceptLanguage: ctx.get('accept-language') });
      const token = csrf.token('login', details.uid);
      if (ctx.method === 'POST' && match[2]) {
        const form = await readForm(ctx);
        csrf.verify('login', details.uid, form.csrf);
        const login = form.login ?? '';
        if (!people.has(login)) {
          const [allowed, value] = !store ? [1, 0] : await store.run(rateLimit(), [`${store.prefix}host:wrong-names:{${details.uid}}`], [WRONG_NAMES.limit, WRONG_NAMES.windowMs]);
          if (allowed !== 1) {
            ctx.set('Retry-After', String(Math.ceil(value / 1000)));
            throw new PluginError('rate_limited', 'too many wrong names for this sign-in');
          }
          sendPage(ctx, loginPage(locale, details.uid, token, 'No such person here.'), 400);
          return;
        }
        const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
        ctx.status = 303;
        ctx.redirect(to);
        return;
      }
      if (details.prompt.name === 'login') {
        sendPage(ctx, loginPage(locale, details.uid, token));
        return;
      }
      if (details.prompt.name === 'consent') {
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
        const missing = details.prompt.details;
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        const grantId = await grant.save();
        const to = await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
        ctx.status = 303;
        ctx.redirect(to);
        return;
      }
      throw new PluginError('invalid_request', `prompt ${details.prompt.name} is not handled by this host`);
    });
  };
}

/** The host's sign-in on the provider itself (it serves itself: server.js). */
export function mountInteractions(provider, store) {
  provider.use(interactionRoutes(provider, store));
}

const digest = (value) => createHash('sha256').update(value).digest();

/**
 * The host's own account flows tell the person what changed in their
 * account: here its admin tool's "a passkey was added" (POST
 * /host/passkey-added, form { accountId, name, ref }, behind the host's admin
 * key), through plugin.securityNotice.
 */
export function mountAccountEvents(provider, plugin) {
  provider.use(async (ctx, next) => {
    if (ctx.path !== '/host/passkey-added' || ctx.method !== 'POST') return next();
    if (!timingSafeEqual(digest(ctx.get('x-host-admin')), digest(process.env.HOST_COOKIE_KEY))) {
      ctx.status = 401;
      return;
    }
    const form = await readForm(ctx);
    const result = await plugin.securityNotice(form.accountId, 'passkey_added', { name: form.name, ref: form.ref });
    ctx.body = { result };
  });
}
