/** What the security notice tests share: browsers of a kind, a person's inbox, the letters to a person. */
import { expect } from 'chai';

import type { Locale } from '../../src/i18n/index.ts';
import { Agent } from './agent.ts';
import type { Harness } from './reference.ts';

export const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
export const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

/** One inbox item as GET /console/api/inbox gives it. */
export type NoticeItem = { id: string; from?: string; notice?: string; category: string; siteName: string; title: string; body: string; read: boolean };

/** A new browser (its own cookie jar) of a kind, reading `language`. */
export function browser(userAgent: string, language: Locale | string = 'en'): Agent {
  const agent = new Agent();
  agent.headers['user-agent'] = userAgent;
  agent.acceptLanguage = language;
  return agent;
}

/** The signed-in person's inbox, newest first. */
export async function inboxOf(h: Harness, agent: Agent): Promise<NoticeItem[]> {
  const res = await agent.request('GET', `${h.issuer}/console/api/inbox`, undefined, { accept: 'application/json' });
  expect(res.status).to.equal(200);
  return (JSON.parse(res.body) as { items: NoticeItem[] }).items;
}

/** The letters to `email` with this subject, so far. */
export const lettersTo = (h: Harness, email: string, subject: string) => h.smtp.letters.filter((l) => JSON.stringify(l.to).includes(email) && l.subject === subject);
