// The host's own app, as a team that already runs oidc-provider has it: its
// accounts, clients, keys, cookie keys and a sign-in step of its own (not the
// reference provider's). The consumer test writes this file beside the
// README's snippets in a fresh app; settings come from the environment.
import { createPrivateKey } from 'node:crypto';

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

async function formBody(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return new URLSearchParams(text);
}

/** The host's sign-in: a name, no password (it is a test host); consent granted as asked. */
export function mountInteractions(provider) {
  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(ctx.path);
    if (!match) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== match[1]) ctx.throw(400, 'interaction mismatch');
    if (ctx.method === 'POST' && match[2]) {
      const login = (await formBody(ctx.req)).get('login');
      if (!people.has(login)) ctx.throw(400, 'unknown person');
      const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      ctx.status = 303;
      return ctx.redirect(to);
    }
    if (details.prompt.name === 'login') {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>Sign in</title><form method="post" action="/interaction/${details.uid}/login"><input name="login"><button>Sign in</button></form>`;
      return undefined;
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
      return ctx.redirect(to);
    }
    return ctx.throw(400, `prompt ${details.prompt.name} is not handled by this host`);
  });
}
