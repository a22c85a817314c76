/**
 * The reference provider's emailed-code sign-in as its tests walk it: the
 * site's authorization request, the login page, the letter with the code.
 */
import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import * as oidc from 'openid-client';

import { Agent, formFor, type Response } from './agent.ts';
import { siteClient, type Harness } from './reference.ts';

export const site = siteClient('site-signin');
export const REDIRECT = site.redirect_uris![0]!;
export const SERVICE = 'Sign-in service';

/** Every address a letter was sent to. */
export function recipients(letter: ParsedMail): string[] {
  const to = letter.to === undefined ? [] : Array.isArray(letter.to) ? letter.to : [letter.to];
  return to.flatMap((group) => group.value.map((a) => a.address ?? ''));
}

export function lettersTo(h: Harness, address: string): ParsedMail[] {
  return h.smtp.letters.filter((l) => recipients(l).includes(address));
}

export const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));

/** The `role="alert"` paragraph the interaction pages render for an error. */
export const alert = (id: string, message: string) => `<p id="${id}" class="error" role="alert">${message}</p>`;

export interface Flow {
  agent: Agent;
  /** The login page (the interaction, after the authorization redirect). */
  page: Response;
  state: string;
  verifier: string;
}

/** The site sends the browser to the authorization endpoint; the browser lands on the login page. */
export async function begin(h: Harness, agent: Agent, params: Record<string, string> = {}): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = new URL('/auth', h.issuer);
  url.search = new URLSearchParams({
    client_id: site.client_id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
  }).toString();
  const first = await agent.get(url.href);
  expect(first.status, 'authorization redirect').to.equal(303);
  expect(first.location).to.match(new RegExp(`^${h.issuer}/interaction/[\\w-]+$`));
  const page = await agent.get(first.location!);
  expect(page.status, 'login page').to.equal(200);
  return { agent, page, state, verifier };
}

/** Posts the address on the login page; returns the code page and the code from the one new letter. */
export async function requestCode(h: Harness, flow: Flow, email: string): Promise<{ codePage: Response; code: string; letter: ParsedMail }> {
  const before = lettersTo(h, email).length;
  const posted = await flow.agent.submit(flow.page, formFor(flow.page.body, '/email'), { email });
  expect(posted.status, 'email form').to.equal(303);
  expect(posted.location).to.equal(flow.page.url);
  const letter = await h.smtp.waitFor((l) => recipients(l).includes(email) && lettersTo(h, email).indexOf(l) >= before);
  const code = /\b(\d{6})\b/.exec(letter.subject ?? '')?.[1];
  expect(code, `code in subject ${letter.subject}`).to.be.a('string');
  const codePage = await flow.agent.get(posted.location!);
  expect(codePage.status, 'code page').to.equal(200);
  return { codePage, code: code!, letter };
}

export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

export const isCallback = (u: string) => u.startsWith(REDIRECT);
