/**
 * A second oidc-provider on loopback, as the "social" provider people sign
 * in with (the reference provider's `upstreams`), with a tiny login of its
 * own: a form that takes the person's `sub` (or Cancel), then signs in and
 * grants in one step. It records what it was asked (each authorization
 * request's parameters) and each time it showed its login form.
 */
import type { Server } from 'node:http';

import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { ClientMetadata, JWK } from 'oidc-provider';

import { memoryAdapter } from '../../adapters/memory.ts';
import { freePort } from './net.ts';

export interface UpstreamPerson {
  email?: string;
  email_verified?: boolean;
  name?: string;
  /** Claims its ID tokens carry; the others come from UserInfo only (none but `sub` in the ID token by default). */
  idToken?: { email?: string; email_verified?: boolean; name?: string };
}

export interface TestUpstream {
  issuer: string;
  client: { client_id: string; client_secret: string };
  /** People who can sign in there, by sub. */
  people: Map<string, UpstreamPerson>;
  /** The parameters of every authorization request it received. */
  requests: URLSearchParams[];
  /** Every login form it showed: the interaction's prompt and why. */
  loginsShown: { prompt: string; reasons: string[] }[];
  /**
   * While true, it behaves like an upstream that ignores re-authentication:
   * it drops `prompt` and `max_age` from requests and says the login
   * happened an hour ago (an old session let through).
   */
  stale: boolean;
  /** The amr its sign-ins give (RFC 8176), in its ID tokens; none while undefined. */
  amr: string[] | undefined;
  close(): Promise<void>;
}

function page(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Upstream</title></head><body><main>${body}</main></body></html>`;
}

/** The upstream on a free port of 127.0.0.1; `redirectUri` is the reference provider's `/upstream/<id>/callback`. */
export async function startTestUpstream(opts: { redirectUri: string; clientId?: string }): Promise<TestUpstream> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const client = { client_id: opts.clientId ?? 'reference-provider', client_secret: 'upstream-secret-0123456789abcdef' };
  const people = new Map<string, UpstreamPerson>();
  const requests: URLSearchParams[] = [];
  const loginsShown: TestUpstream['loginsShown'] = [];
  let server: Server | undefined;
  const self: TestUpstream = {
    issuer, client, people, requests, loginsShown, stale: false, amr: undefined,
    close: () => new Promise((resolve) => {
      server!.closeAllConnections();
      server!.close(() => resolve());
    }),
  };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    adapter: memoryAdapter().factory,
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'upstream' } as JWK] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
    clients: [{
      ...client,
      redirect_uris: [opts.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    } as ClientMetadata],
    findAccount: (_ctx, sub) => {
      const person = people.get(sub);
      if (!person) return undefined;
      const { idToken, ...userinfo } = person;
      return { accountId: sub, claims: (use: string) => (use === 'id_token' ? { sub, ...idToken } : { sub, ...userinfo }) };
    },
    // The ID token carries what the person's `idToken` says, UserInfo the rest (two sources, as at real upstreams).
    conformIdTokenClaims: false,
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['upstream-cookie-key-0123456789'] },
  });
  provider.use(async (ctx, next) => {
    if (ctx.path === '/auth') {
      const params = new URLSearchParams(ctx.querystring);
      requests.push(params);
      if (self.stale) {
        params.delete('prompt');
        params.delete('max_age');
        ctx.querystring = params.toString();
      }
    }
    await next();
  });
  provider.use(async (ctx, next) => {
    const m = /^\/interaction\/([\w-]+)(\/login|\/cancel)?$/.exec(ctx.path);
    if (!m) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (!m[2] && ctx.method === 'GET') {
      loginsShown.push({ prompt: details.prompt.name, reasons: details.prompt.reasons });
      ctx.type = 'html';
      ctx.body = page(`<h1>Sign in at the upstream</h1>
<form method="post" action="/interaction/${details.uid}/login"><label for="sub">Who</label><input id="sub" name="sub"><button type="submit">Sign in</button></form>
<form method="post" action="/interaction/${details.uid}/cancel"><button type="submit">Cancel</button></form>`);
      return undefined;
    }
    if (ctx.method !== 'POST') return next();
    if (m[2] === '/cancel') {
      await provider.interactionFinished(ctx.req, ctx.res, { error: 'access_denied', error_description: 'the person cancelled' }, { mergeWithLastSubmission: false });
      return undefined;
    }
    const body = await new Promise<string>((resolve) => {
      let data = '';
      ctx.req.on('data', (c) => { data += c; });
      ctx.req.on('end', () => resolve(data));
    });
    const sub = new URLSearchParams(body).get('sub') ?? '';
    const grant = new provider.Grant({ accountId: sub, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    const ts = self.stale ? Math.floor(Date.now() / 1000) - 3600 : undefined;
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: sub, ...(ts ? { ts } : {}), ...(self.amr ? { amr: self.amr } : {}) }, consent: { grantId } }, { mergeWithLastSubmission: false });
    return undefined;
  });
  server = await new Promise((resolve, reject) => {
    const s = provider.listen(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  return self;
}
