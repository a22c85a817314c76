/**
 * The emailed-code sign-in under attack (security review, issue 13 items
 * 1-4): a wrong-code budget per address across codes, a per-IP limit on
 * checking codes, limits an attacker cannot turn against the address' owner,
 * the client IP behind proxies, and refused requests that leave no keys.
 * Everything through HTTP, as a browser (the agent) sends it.
 */
import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits, type LoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { ConfigurationError, settingsFromEnv } from '../../examples/reference/settings.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import type { ReferenceSettings } from '../../examples/reference/provider.ts';

const site = siteClient('site-limits');
const REDIRECT = site.redirect_uris![0]!;
const isCallback = (u: string) => u.startsWith(REDIRECT);
const alert = (id: string, message: string) => `<p id="${id}" class="error" role="alert">${message}</p>`;
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

function to(letter: ParsedMail, address: string): boolean {
  return JSON.stringify(letter.to ?? '').includes(address);
}

async function harness(name: string, limits: Partial<LoginCodeLimits>, extra: Partial<ReferenceSettings> = {}): Promise<Harness> {
  return startHarness(name, { clients: [site], loginCodeLimits: { ...defaultLoginCodeLimits, ...limits }, ...extra });
}

/** The site sends the browser to sign in; returns the login page. */
async function begin(h: Harness, agent: Agent, params: Record<string, string> = {}): Promise<Response> {
  const url = new URL('/auth', h.issuer);
  url.search = new URLSearchParams({
    ...params,
    client_id: site.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid email',
    state: oidc.randomState(), code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
  }).toString();
  const page = await agent.follow(await agent.get(url.href));
  expect(page.status, 'login page').to.equal(200);
  return page;
}

/** Asks for a code on a login page: the answer, and the code when a letter came. */
async function askCode(h: Harness, agent: Agent, page: Response, email: string): Promise<{ res: Response; code?: string }> {
  const sent = h.smtp.letters.length;
  const res = await agent.submit(page, formFor(page.body, '/email'), { email });
  if (res.status !== 303) return { res };
  const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && to(l, email));
  return { res, code: /\b(\d{6})\b/.exec(letter.subject ?? '')![1]! };
}

async function typeCode(agent: Agent, page: Response, code: string): Promise<Response> {
  const codePage = await agent.get(page.url);
  return agent.submit(codePage, formFor(codePage.body, '/code'), { code });
}

async function keys(h: Harness, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for await (const key of h.reference.plugin.store.scan(pattern)) found.push(key);
  return found;
}

describe('sign-in limits an attacker meets (issue 13)', function () {
  this.timeout(60_000);

  it('caps wrong codes per address across codes: past the free failures, checks and new codes wait, doubling', async () => {
    const h = await harness('limits-budget', { failures: { free: 3, windowMs: 60_000, firstLockMs: 1000, maxLockMs: 3_600_000 } });
    try {
      const victim = 'budget@example.com';
      const attacker = new Agent();
      // Two codes, three wrong guesses in all: each answered as a wrong code.
      const first = await begin(h, attacker);
      const one = await askCode(h, attacker, first, victim);
      expect((await typeCode(attacker, first, wrongCode(one.code!))).status).to.equal(400);
      expect((await typeCode(attacker, first, wrongCode(one.code!))).status).to.equal(400);
      const second = await begin(h, attacker);
      const two = await askCode(h, attacker, second, victim);
      expect((await typeCode(attacker, second, wrongCode(two.code!))).status).to.equal(400);
      // The fourth wrong code for the address locks it (here for a second): said, with Retry-After.
      const locked = await typeCode(attacker, second, wrongCode(two.code!));
      expect(locked.status).to.equal(429);
      expect(locked.headers.get('retry-after')).to.equal('1');
      expect(locked.body).to.include(alert('code-error', t('en', 'code.error.locked', { wait: '1 minute' })));
      // While locked, even the right code is not checked, and no new code goes out.
      const right = await typeCode(attacker, second, two.code!);
      expect(right.status).to.equal(429);
      const again = await askCode(h, attacker, await begin(h, attacker), victim);
      expect(again.res.status).to.equal(429);
      expect(again.res.body).to.include(t('en', 'code.error.locked', { wait: '1 minute' }));
      // Once the lock is over, the next wrong code locks it for twice as long.
      await new Promise((r) => setTimeout(r, 1100));
      const page = await begin(h, attacker);
      const fourth = await askCode(h, attacker, page, victim);
      expect(fourth.res.status).to.equal(303);
      const doubled = await typeCode(attacker, page, wrongCode(fourth.code!));
      expect(doubled.status).to.equal(429);
      expect(doubled.headers.get('retry-after')).to.equal('2');
    } finally {
      await h.close();
    }
  });

  it('limits code checks per IP, before anything else', async () => {
    const h = await harness('limits-check-ip', { checksPerIp: { limit: 3, windowMs: 60_000 } });
    try {
      const agent = new Agent();
      const page = await begin(h, agent);
      const { code } = await askCode(h, agent, page, 'checks@example.com');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await typeCode(agent, page, wrongCode(code!))).status);
      const fourth = await typeCode(agent, page, code!);
      expect([...statuses, fourth.status]).to.deep.equal([400, 400, 400, 429]);
      expect(Number(fourth.headers.get('retry-after'))).to.be.within(1, 60);
      expect(fourth.body).to.include(alert('code-error', t('en', 'login.error.ip_limited', { wait: '1 minute' })));
    } finally {
      await h.close();
    }
  });

  it('cannot lock a person out: while an attacker hammers their address from elsewhere, they sign in from their browser', async () => {
    const h = await harness('limits-lockout', {
      perAddress: { limit: 2, windowMs: 60_000 },
      failures: { free: 2, windowMs: 60_000, firstLockMs: 60_000, maxLockMs: 60_000 },
    }, { trustProxy: 1 });
    try {
      const email = 'owner@example.com';
      const owner = new Agent();
      owner.headers['x-forwarded-for'] = '198.51.100.7';
      // The owner signed in from this browser before.
      const before = await begin(h, owner);
      const first = await askCode(h, owner, before, email);
      const done = await owner.follow(await typeCode(owner, before, first.code!), isCallback);
      expect(done.body).to.include('/confirm"');

      // The attacker, from another network and fresh browsers: code requests until refused, wrong codes until locked.
      const attacker = new Agent();
      attacker.headers['x-forwarded-for'] = '203.0.113.9';
      const answers: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const page = await begin(h, attacker);
        const asked = await askCode(h, attacker, page, email);
        answers.push(asked.res.status);
        if (asked.code) {
          answers.push((await typeCode(attacker, page, wrongCode(asked.code))).status);
          answers.push((await typeCode(attacker, page, wrongCode(asked.code))).status);
        }
      }
      expect(answers).to.include(429);
      expect(answers.at(-1)).to.equal(429);

      // The owner, in their own browser (the site asks for a fresh sign-in): a code, and in.
      const page = await begin(h, owner, { prompt: 'login' });
      const asked = await askCode(h, owner, page, email);
      expect(asked.res.status, 'the owner gets a code').to.equal(303);
      const signedIn = await typeCode(owner, page, asked.code!);
      expect(signedIn.status, 'the owner\'s code is accepted').to.equal(303);
      expect(signedIn.location).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));
    } finally {
      await h.close();
    }
  });

  it('takes the client IP from the proxies it trusts, not from what the client wrote in X-Forwarded-For', async () => {
    for (const trustProxy of [1, ['127.0.0.1']] as const) {
      const h = await harness('limits-xff', { perIp: { limit: 2, windowMs: 60_000 } }, { trustProxy: trustProxy as ReferenceSettings['trustProxy'] });
      try {
        const statuses: number[] = [];
        for (let i = 1; i <= 4; i += 1) {
          const agent = new Agent();
          // The client forges an address; the proxy in front appends the one it saw.
          agent.headers['x-forwarded-for'] = `192.0.2.${i}, 10.1.2.3`;
          statuses.push((await askCode(h, agent, await begin(h, agent), `xff-${i}@example.com`)).res.status);
        }
        expect(statuses, `TRUST_PROXY ${JSON.stringify(trustProxy)}`).to.deep.equal([303, 303, 429, 429]);
        expect(await keys(h, 'rate:login-ip:{10.1.2.3}')).to.have.length(1);
        expect(await keys(h, 'rate:login-ip:{192.0.2.*')).to.deep.equal([]);
      } finally {
        await h.close();
      }
    }
  });

  it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
    const h = await harness('limits-xff-untrusted', { perIp: { limit: 1, windowMs: 60_000 } }, { trustProxy: ['10.9.9.9'] });
    try {
      const agent = new Agent();
      agent.headers['x-forwarded-for'] = '192.0.2.77';
      expect((await askCode(h, agent, await begin(h, agent), 'peer@example.com')).res.status).to.equal(303);
      expect(await keys(h, 'rate:login-ip:*')).to.deep.equal([`${h.prefix}rate:login-ip:{127.0.0.1}`]);
    } finally {
      await h.close();
    }
  });

  it('asks the IP limit first: 100 requests for random addresses from one IP leave keys for the allowed ones only', async () => {
    const h = await harness('limits-keys', { perIp: { limit: 5, windowMs: 60_000 } });
    try {
      const agent = new Agent();
      const page = await begin(h, agent);
      const form = formFor(page.body, '/email');
      const statuses: number[] = [];
      for (let i = 0; i < 100; i += 1) {
        statuses.push((await agent.submit(page, form, { email: `r${i}-${Math.random().toString(36).slice(2)}@example.com` })).status);
      }
      expect(statuses.filter((s) => s === 303)).to.have.length(5);
      expect(statuses.filter((s) => s === 429)).to.have.length(95);
      expect(await keys(h, 'rate:login-address:*')).to.have.length(5);
      expect(await keys(h, 'login-failures:*')).to.deep.equal([]);
    } finally {
      await h.close();
    }
  });

  it('reads TRUST_PROXY as a count, true, or a list of addresses and ranges, and names a bad one', () => {
    const env = { CONFIG_FILE: new URL('../../examples/config.json', import.meta.url).pathname };
    expect(settingsFromEnv({ ...env }).trustProxy).to.equal(false);
    expect(settingsFromEnv({ ...env, TRUST_PROXY: '0' }).trustProxy).to.equal(false);
    expect(settingsFromEnv({ ...env, TRUST_PROXY: 'true' }).trustProxy).to.equal(1);
    expect(settingsFromEnv({ ...env, TRUST_PROXY: '2' }).trustProxy).to.equal(2);
    expect(settingsFromEnv({ ...env, TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).to.deep.equal(['10.0.0.0/8', '::1']);
    expect(() => settingsFromEnv({ ...env, TRUST_PROXY: 'proxy.example' })).to.throw(ConfigurationError, 'TRUST_PROXY: not an IP address or CIDR range: "proxy.example"');
  });
});
