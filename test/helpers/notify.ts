/**
 * What the POST /api/notify tests share: the sites that call it, the service
 * they call (on Redis, a Cluster in the Cluster pass, or the embedded store),
 * and the calls: a site's request, a person connected through the real
 * sign-in, the letters that arrive.
 */
import type { ParsedMail } from 'mailparser';

import { Agent } from './agent.ts';
import { expectDocumented } from './openapi.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from './reference.ts';

export const site = siteClient('n-site', { client_name: 'Shop', client_uri: 'https://shop.example' });
export const other = siteClient('n-other', { client_uri: 'https://other.example' });
export const pairwise = siteClient('n-pairwise', { subject_type: 'pairwise', client_uri: 'https://pw.example' });
const publicSite = siteClient('n-public', { token_endpoint_auth_method: 'none', client_secret: undefined });
// RFC 6749 appendix B: id and secret are form-encoded before Basic.
export const encoded = siteClient('n:enc', { client_secret: 'a+b:c%d e/0123456789abcdef', client_uri: 'https://enc.example' });
export const burst = siteClient('n-burst', { client_uri: 'https://burst.example' });
export const expired = siteClient('n-expired', { client_secret_expires_at: 1 });
export const postAuth = siteClient('n-post', { token_endpoint_auth_method: 'client_secret_post', client_uri: 'https://post.example' });
// An RFC 2047 encoded-word of "Verify now at evil.com": a client decoding it a second time would show that.
export const ENCODED_WORD = '=?UTF-8?B?VmVyaWZ5IG5vdyBhdCBldmlsLmNvbQ==?=';
export const encodedName = siteClient('n-encoded', { client_name: ENCODED_WORD, client_uri: 'https://encoded.example' });

export type Answer = { status: number; headers: Headers; json: Record<string, unknown> | undefined };

/** The service with every site above but `burst`; a person whose address is in `noEmail` has none for letters. */
export async function startNotifyHarness(embedded: boolean, noEmail = new Set<string>()): Promise<Harness> {
  const h: Harness = await startHarness('notify', {
    embedded,
    clients: [site, other, pairwise, publicSite, encoded, expired, postAuth, encodedName],
    plugin: {
      letters: { backoffMs: 50 },
      contacts: async (accountId: string) => {
        const account = await h.reference.accounts.get(accountId);
        if (!account) return undefined;
        return noEmail.has(account.email ?? '') ? { locale: account.locale } : { email: account.email, locale: account.locale };
      },
    },
  });
  return h;
}

/** The calls of the /api/notify tests, on the service `harness()` gives when they run. */
export function notifyCalls(harness: () => Harness) {
  function basic(id: string, secret: string): string {
    const form = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
    return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
  }

  async function notify(body: unknown, opts: { client?: typeof site; auth?: string | null; type?: string; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    const client = opts.client ?? site;
    const headers: Record<string, string> = { 'content-type': opts.type ?? 'application/json', ...opts.headers };
    const auth = opts.auth === undefined ? basic(client.client_id, client.client_secret!) : opts.auth;
    if (auth !== null) headers.authorization = auth;
    const url = `${harness().issuer}/api/notify`;
    const res = await fetch(url, { method: 'POST', headers, body: opts.raw ?? JSON.stringify(body) });
    const text = await res.text();
    expectDocumented('POST', url, { status: res.status, headers: res.headers, body: text });
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
  }

  /** Signs the person in to the site through the real flow; returns the `sub` the site got. */
  async function connect(email: string, client = site): Promise<string> {
    const config = await discover(harness(), client);
    const { tokens } = await signIn(harness(), config, new Agent(), email);
    return tokens.claims()!.sub;
  }

  const message = (sub: string, extra: Record<string, unknown> = {}) => ({ sub, category: 'transactional', title: 'Your order', body: 'It ships today.', ...extra });
  /** A header as the letter carries it (mailparser restructures List-* headers). */
  const rawHeader = (letter: ParsedMail, name: string) => {
    const line = letter.headerLines.find((l) => l.key === name)?.line;
    return line?.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  };
  const accountId = async (email: string) => (await harness().reference.accounts.findByEmail(email))!.accountId;
  /** Notification letters (not sign-in codes) to an address. */
  const isNotificationTo = (email: string) => (l: ParsedMail) => JSON.stringify(l.to).includes(email) && l.headers.has('x-notification-id');
  const lettersTo = (email: string) => harness().smtp.letters.filter(isNotificationTo(email));
  return { basic, notify, connect, message, rawHeader, accountId, isNotificationTo, lettersTo };
}
