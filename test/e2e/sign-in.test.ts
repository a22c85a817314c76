import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t, type Locale } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('site-signin');
const REDIRECT = site.redirect_uris![0]!;
const SERVICE = 'Sign-in service';

/** Every address a letter was sent to. */
function recipients(letter: ParsedMail): string[] {
  const to = letter.to === undefined ? [] : Array.isArray(letter.to) ? letter.to : [letter.to];
  return to.flatMap((group) => group.value.map((a) => a.address ?? ''));
}

function lettersTo(h: Harness, address: string): ParsedMail[] {
  return h.smtp.letters.filter((l) => recipients(l).includes(address));
}

const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));

/** The `role="alert"` paragraph the interaction pages render for an error. */
const alert = (id: string, message: string) => `<p id="${id}" class="error" role="alert">${message}</p>`;

interface Flow {
  agent: Agent;
  /** The login page (the interaction, after the authorization redirect). */
  page: Response;
  state: string;
  verifier: string;
}

/** The site sends the browser to the authorization endpoint; the browser lands on the login page. */
async function begin(h: Harness, agent: Agent, params: Record<string, string> = {}): Promise<Flow> {
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
async function requestCode(h: Harness, flow: Flow, email: string): Promise<{ codePage: Response; code: string; letter: ParsedMail }> {
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

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

const isCallback = (u: string) => u.startsWith(REDIRECT);

describe('reference provider, emailed-code sign-in (Redis)', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('sign-in', { clients: [site] });
  });
  after(() => h.close());

  it('shows a login page with an email field and a hidden csrf, under a strict CSP and no-store', async () => {
    const { page } = await begin(h, new Agent());
    const form = formFor(page.body, '/email');
    expect(form.method).to.equal('post');
    expect(Object.keys(form.fields).sort()).to.deep.equal(['csrf', 'email']);
    expect(form.fields.csrf).to.match(/^[\w-]{43}$/);
    expect(form.fields.email).to.equal('');
    expect(page.body).to.include(`<input type="hidden" name="csrf" value="${form.fields.csrf}">`);
    expect(page.body).to.match(/<input id="email" name="email" type="email"/);
    expect(page.body).to.include('<html lang="en" dir="ltr">');
    const csp = page.headers.get('content-security-policy');
    expect(csp).to.be.a('string');
    expect(csp!.split('; ')).to.include("default-src 'none'");
    expect(csp).to.include(`form-action 'self' ${new URL(REDIRECT).origin}`);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
  });

  it('emails exactly one letter with a 6-digit code and then asks for the code', async () => {
    const email = 'one-letter@example.com';
    const flow = await begin(h, new Agent());
    const { codePage, code, letter } = await requestCode(h, flow, email);
    await settle();
    expect(lettersTo(h, email)).to.have.length(1);
    expect(code).to.match(/^\d{6}$/);
    expect(letter.subject).to.equal(`${code} is your sign-in code for ${SERVICE}`);
    expect(letter.text).to.include(`    ${code}\n`);
    expect(codePage.body).to.match(/<input id="code" name="code" type="text"/);
    expect(codePage.body).to.include(`<strong>${email}</strong>`);
    const codeForm = formFor(codePage.body, '/code');
    expect(Object.keys(codeForm.fields).sort()).to.deep.equal(['code', 'csrf']);
    expect(codeForm.fields.csrf).to.equal(formFor(flow.page.body, '/email').fields.csrf);
  });

  it('answers a wrong code with 400 and the code page again; the right code still works afterwards', async () => {
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, 'wrong-once@example.com');
    const wrong = await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code: wrongCode(code) });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.include(alert('code-error', t('en', 'code.error.invalid', { count: 4 })));
    expect(wrong.body).to.include('Attempts left for this code: 4.');
    expect(wrong.body).to.match(/<input id="code" name="code"[^>]* aria-invalid="true" autofocus>/);
    // Pasted with the spaces around it: still the code.
    const right = await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code: ` ${code} ` });
    expect(right.status).to.equal(303);
    expect(right.location).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));
    const next = await flow.agent.follow(right, isCallback);
    expect(next.status).to.equal(200);
    expect(forms(next.body).map((f) => f.action.replace(/^\/interaction\/[\w-]+/, ''))).to.deep.equal(['/confirm', '/abort']);
  });

  it('counts down the attempts of a code; the 5th wrong one voids it, says so, and offers a new code to the same address', async () => {
    const email = 'five-wrong@example.com';
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, email);
    const form = formFor(codePage.body, '/code');
    for (let i = 1; i <= 4; i += 1) {
      const wrong = await flow.agent.submit(codePage, form, { code: wrongCode(code) });
      expect(wrong.status, `wrong attempt ${i}`).to.equal(400);
      expect(wrong.body, `wrong attempt ${i}`).to.include(alert('code-error', t('en', 'code.error.invalid', { count: 5 - i })));
      expect(wrong.body, `wrong attempt ${i}`).to.include('name="code"');
    }
    const last = await flow.agent.submit(codePage, form, { code: wrongCode(code) });
    expect(last.status).to.equal(400);
    expect(last.body).to.include(alert('code-error', t('en', 'code.error.used_up')));
    // No field for a code that cannot work; the address stays, and a new code is one press away.
    expect(last.body).to.not.include('name="code"');
    expect(last.body).to.include(`<strong>${email}</strong>`);
    expect(last.body).to.match(/<button type="submit" class="primary">Send a new code<\/button>/);
    // The right code no longer works either (a stale form): said on the code step, address kept.
    const refused = await flow.agent.submit(codePage, form, { code });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.include(alert('code-error', t('en', 'code.error.expired')));
    expect(refused.body).to.not.include('name="email"');
    const again = await flow.agent.get(flow.page.url);
    expect(again.body).to.include(alert('code-error', t('en', 'code.error.unusable')));
    // "Send a new code": a new letter to the same address, no typing; its code signs in.
    const before = lettersTo(h, email).length;
    const resent = await flow.agent.submit(again, formFor(again.body, '/resend'));
    expect(resent.status).to.equal(303);
    const letter = await h.smtp.waitFor((l) => recipients(l).includes(email) && lettersTo(h, email).indexOf(l) >= before);
    const fresh = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
    const page = await flow.agent.get(resent.location!);
    expect(page.body).to.include(`<p role="status">${t('en', 'code.resent', { email: `<strong>${email}</strong>` })}</p>`);
    const ok = await flow.agent.submit(page, formFor(page.body, '/code'), { code: fresh });
    expect(ok.status).to.equal(303);
    expect(ok.location).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));
  });

  it('"Use another address" forgets the pending code: the login page again, and the first address\' code no longer signs in', async () => {
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, 'first-address@example.com');
    const restarted = await flow.agent.submit(codePage, formFor(codePage.body, '/restart'));
    expect(restarted.status).to.equal(303);
    expect(restarted.location).to.equal(flow.page.url);
    const page = await flow.agent.get(restarted.location!);
    expect(page.body).to.include('name="email"');
    expect(page.body).to.not.include('name="code"');
    expect(page.body).to.not.include('first-address@example.com');
    const stale = await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code });
    expect(stale.status).to.equal(400);
    expect(stale.body).to.include(alert('email-error', escapeHtml(t('en', 'code.error.missing'))));
  });

  it('uses a code once: replaying the successful POST with the same fields and cookies signs nobody in', async () => {
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, 'replay@example.com');
    const form = formFor(codePage.body, '/code');
    const action = new URL(form.action, codePage.url).href;
    const jar = new Map([...flow.agent.cookies].map(([host, cookies]) => [host, new Map(cookies)]));
    const replayer = () => {
      const agent = new Agent();
      for (const [host, cookies] of jar) agent.cookies.set(host, new Map(cookies));
      return agent;
    };

    const ok = await flow.agent.request('POST', action, { ...form.fields, code });
    expect(ok.status).to.equal(303);
    expect(ok.location).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));

    // Replayed while the interaction still exists: the code is gone.
    const replayed = await replayer().request('POST', action, { ...form.fields, code });
    expect(replayed.status).to.equal(400);
    expect(replayed.location).to.equal(undefined);
    expect(replayed.body).to.include(alert('email-error', t('en', 'code.error.missing')));
    expect(replayed.body).to.include('name="email"');

    // Replayed after the sign-in went on (the interaction is consumed): a session error page.
    const consent = await flow.agent.follow(ok, isCallback);
    expect(consent.status).to.equal(200);
    expect(consent.body).to.include('/confirm"');
    const late = await replayer().request('POST', action, { ...form.fields, code });
    expect(late.status).to.equal(400);
    expect(late.location).to.equal(undefined);
    expect(late.body).to.include(`<p role="alert">${t('en', 'error.session_expired')}</p>`);
    expect(late.body).to.include(t('en', 'error.status', { status: 400 }));
  });

  it('refuses a missing or wrong csrf on the email form with 400 and sends no letter', async () => {
    const email = 'csrf@example.com';
    const flow = await begin(h, new Agent());
    const other = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const action = new URL(form.action, flow.page.url).href;
    const otherCsrf = formFor(other.page.body, '/email').fields.csrf!;
    expect(otherCsrf).to.not.equal(form.fields.csrf);
    const attempts: Record<string, Record<string, string>> = {
      missing: { email },
      empty: { email, csrf: '' },
      wrong: { email, csrf: 'A'.repeat(43) },
      'another interaction': { email, csrf: otherCsrf },
    };
    for (const [what, fields] of Object.entries(attempts)) {
      const res = await flow.agent.request('POST', action, fields);
      expect(res.status, what).to.equal(400);
      expect(res.location, what).to.equal(undefined);
      expect(res.body, what).to.include(`<p role="alert">${t('en', 'error.form_expired')}</p>`);
      expect(res.body, what).to.not.include('name="code"');
    }
    await settle();
    expect(lettersTo(h, email)).to.have.length(0);
    expect(await h.reference.plugin.store.hmget(`${h.prefix}login-code:{${flow.page.url.split('/').at(-1)}}`, ['email'])).to.deep.equal([null]);
  });

  for (const [locale, params] of [['en', {}], ['de', { ui_locales: 'de' }]] as const) {
    it(`refuses an invalid address with 400 and the ${locale} message, and sends no letter`, async () => {
      const sent = h.smtp.letters.length;
      const flow = await begin(h, new Agent(), params);
      const res = await flow.agent.submit(flow.page, formFor(flow.page.body, '/email'), { email: 'not-an-address' });
      expect(res.status).to.equal(400);
      expect(res.body).to.include(`<html lang="${locale}"`);
      expect(res.body).to.include(alert('email-error', t(locale, 'login.error.invalid_email')));
      expect(formFor(res.body, '/email').fields.email).to.equal('not-an-address');
      await settle();
      expect(h.smtp.letters.length).to.equal(sent);
    });
  }

  it('creates the account on the first sign-in and reuses it on the next (same sub)', async () => {
    const email = 'returning@example.com';
    const config = await discover(h, site);
    expect(await h.reference.accounts.findByEmail(email)).to.equal(undefined);
    const first = await signIn(h, config, new Agent(), email);
    const account = await h.reference.accounts.findByEmail(email);
    expect(account).to.include({ email });
    expect(account!.accountId).to.be.a('string').and.have.length.greaterThan(0);
    expect(first.tokens.claims()!.sub).to.equal(account!.accountId);
    const second = await signIn(h, config, new Agent(), email);
    expect(second.tokens.claims()!.sub).to.equal(account!.accountId);
    expect(await h.reference.accounts.findByEmail(email)).to.deep.equal(account);
    // The browser stays known for the address 180 days after its last sign-in (docs/security.md "Security".
    const known = await h.redis!.pttl(`${h.prefix}login-device:{${email}}`);
    expect(known).to.be.within(180 * 86_400_000 - 60_000, 180 * 86_400_000);
    // Two browsers, each known by a 22-character HMAC of its id, never the id itself.
    const browsers = await h.redis!.hkeys(`${h.prefix}login-device:{${email}}`);
    expect(browsers).to.have.length(2);
    for (const browser of browsers) expect(browser).to.match(/^[\w-]{22}$/);
  });

  const languages: { name: string; locale: Locale; setup(agent: Agent): Record<string, string> }[] = [
    { name: 'ui_locales=de', locale: 'de', setup: () => ({ ui_locales: 'de' }) },
    { name: 'Accept-Language fr-CH, en;q=0.5', locale: 'fr', setup: (agent) => { agent.acceptLanguage = 'fr-CH, en;q=0.5'; return {}; } },
  ];
  for (const { name, locale, setup } of languages) {
    it(`speaks the reader's language (${name}) on the pages and in the letter`, async () => {
      const email = `lang-${locale}@example.com`;
      const agent = new Agent();
      const flow = await begin(h, agent, setup(agent));
      expect(flow.page.body).to.include(`<html lang="${locale}" dir="ltr">`);
      expect(flow.page.body).to.include(`<h1>${t(locale, 'login.title')}</h1>`);
      const { codePage, code, letter } = await requestCode(h, flow, email);
      expect(codePage.body).to.include(`<html lang="${locale}" dir="ltr">`);
      expect(codePage.body).to.include(`<h1>${t(locale, 'code.title')}</h1>`);
      expect(letter.subject).to.equal(t(locale, 'letter.subject', { code, serviceName: SERVICE }));
      expect(letter.text).to.include(t(locale, 'letter.intro_site', { serviceName: SERVICE, clientName: site.client_name! }));
    });
  }

  it('asks for consent with one Allow and one Deny form; Deny returns access_denied to the site', async () => {
    const flow = await begin(h, new Agent());
    const { codePage, code } = await requestCode(h, flow, 'deny@example.com');
    const consent = await flow.agent.follow(await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code }), isCallback);
    expect(consent.status).to.equal(200);
    expect(consent.url).to.match(new RegExp(`^${h.issuer}/interaction/[\\w-]+$`));
    expect(consent.url).to.not.equal(flow.page.url);
    expect(consent.body).to.include(`<h1>${t('en', 'consent.title', { clientName: site.client_name! })}</h1>`);
    expect(consent.body).to.include('<strong>deny@example.com</strong>');
    // What is asked: exactly the two requested scopes, in people's words.
    expect(consent.body).to.include(`<ul class="list">\n<li>${t('en', 'consent.scope.openid')}</li><li>${t('en', 'consent.scope.email')}</li>\n</ul>`);
    expect(consent.body.match(/<li>/g)).to.have.length(2);
    const all = forms(consent.body);
    expect(all).to.have.length(2);
    expect(all.filter((f) => f.action.endsWith('/confirm'))).to.have.length(1);
    expect(all.filter((f) => f.action.endsWith('/abort'))).to.have.length(1);
    expect(all.every((f) => f.method === 'post' && Object.keys(f.fields).join() === 'csrf')).to.equal(true);

    const denied = await flow.agent.follow(await flow.agent.submit(consent, formFor(consent.body, '/abort')), isCallback);
    expect(denied.status).to.equal(303);
    expect(denied.url).to.match(new RegExp(`^${h.issuer}/auth/[\\w-]+$`));
    expect(denied.location).to.be.a('string');
    const callback = new URL(denied.location!);
    expect(`${callback.origin}${callback.pathname}`).to.equal(REDIRECT);
    expect(Object.fromEntries(callback.searchParams)).to.deep.equal({
      error: 'access_denied',
      error_description: 'the person denied access',
      state: flow.state,
      iss: h.issuer,
    });
  });

  it('answers a POST to an interaction without its cookie with a 400 HTML error page, not a 500', async () => {
    const flow = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const stranger = new Agent();
    const res = await stranger.request('POST', new URL(form.action, flow.page.url).href, { ...form.fields, email: 'stranger@example.com' });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.body).to.include('<html lang="en" dir="ltr">');
    expect(res.body).to.include(`<h1>${t('en', 'error.title')}</h1>`);
    expect(res.body).to.include(`<p role="alert">${t('en', 'error.session_expired')}</p>`);
    await settle();
    expect(lettersTo(h, 'stranger@example.com')).to.have.length(0);
  });

  it('refuses a POST whose URL names another interaction than the cookie', async () => {
    const flow = await begin(h, new Agent());
    const form = formFor(flow.page.body, '/email');
    const elsewhere = new URL(form.action.replace(/\/interaction\/[^/]+\//, '/interaction/someone-else/'), flow.page.url).href;
    const res = await flow.agent.request('POST', elsewhere, { ...form.fields, email: 'mismatch@example.com' });
    expect(res.status).to.equal(400);
    expect(res.body).to.include(`<p role="alert">${t('en', 'error.session_expired')}</p>`);
    await settle();
    expect(lettersTo(h, 'mismatch@example.com')).to.have.length(0);
  });
});

describe('reference provider, sign-in code limits (Redis)', () => {
  it('refuses an expired code on the code step, keeps the address and offers a new code', async () => {
    const h = await startHarness('sign-in-ttl', { clients: [site], loginCodeLimits: { ...defaultLoginCodeLimits, ttlMs: 300 } });
    try {
      const flow = await begin(h, new Agent());
      const { codePage, code } = await requestCode(h, flow, 'late@example.com');
      await settle(400);
      // The page, shown again, offers only a new code.
      const shown = await flow.agent.get(flow.page.url);
      expect(shown.body).to.include(alert('code-error', t('en', 'code.error.unusable')));
      expect(shown.body).to.not.include('name="code"');
      const res = await flow.agent.submit(codePage, formFor(codePage.body, '/code'), { code });
      expect(res.status).to.equal(400);
      expect(res.location).to.equal(undefined);
      expect(res.body).to.include(alert('code-error', t('en', 'code.error.expired')));
      expect(res.body).to.include('<strong>late@example.com</strong>');
      expect(res.body).to.not.include('name="email"');
      expect(res.body).to.not.include('name="code"');
      expect(formFor(res.body, '/resend').fields).to.have.keys('csrf');
    } finally {
      await h.close();
    }
  });

  it('answers the third code request for one address within the window with 429 and Retry-After, and no letter', async () => {
    const h = await startHarness('sign-in-rate-address', {
      clients: [site],
      loginCodeLimits: { ...defaultLoginCodeLimits, perAddress: { limit: 2, windowMs: 60_000 } },
    });
    try {
      const email = 'limited@example.com';
      const flow = await begin(h, new Agent());
      const form = formFor(flow.page.body, '/email');
      for (let i = 1; i <= 2; i += 1) {
        const ok = await flow.agent.submit(flow.page, form, { email });
        expect(ok.status, `request ${i}`).to.equal(303);
        await h.smtp.waitFor(() => lettersTo(h, email).length === i);
      }
      // A different address is not limited by this address' counter.
      const other = await flow.agent.submit(flow.page, form, { email: 'unlimited@example.com' });
      expect(other.status).to.equal(303);
      const third = await flow.agent.submit(flow.page, form, { email: email.toUpperCase() });
      expect(third.status).to.equal(429);
      const retryAfter = third.headers.get('retry-after');
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter)).to.be.within(1, 60);
      expect(third.body).to.include(alert('email-error', t('en', 'login.error.rate_limited', { wait: '1 minute' })));
      expect(formFor(third.body, '/email').fields.email).to.equal(email);
      await settle(300);
      expect(lettersTo(h, email)).to.have.length(2);
    } finally {
      await h.close();
    }
  });

  it('answers the third code request from one IP within the window with 429 and Retry-After, and no letter', async () => {
    const h = await startHarness('sign-in-rate-ip', {
      clients: [site],
      loginCodeLimits: { ...defaultLoginCodeLimits, perIp: { limit: 2, windowMs: 30_000 } },
    });
    try {
      const addresses = ['ip-1@example.com', 'ip-2@example.com', 'ip-3@example.com'];
      const results: Response[] = [];
      for (const email of addresses) {
        const flow = await begin(h, new Agent());
        results.push(await flow.agent.submit(flow.page, formFor(flow.page.body, '/email'), { email }));
      }
      expect(results.map((r) => r.status)).to.deep.equal([303, 303, 429]);
      const third = results[2]!;
      const retryAfter = third.headers.get('retry-after');
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter)).to.be.within(1, 30);
      expect(third.body).to.include(alert('email-error', t('en', 'login.error.ip_limited', { wait: '1 minute' })));
      await h.smtp.waitFor(() => lettersTo(h, addresses[1]!).length === 1);
      await settle(300);
      expect(addresses.map((a) => lettersTo(h, a).length)).to.deep.equal([1, 1, 0]);
    } finally {
      await h.close();
    }
  });
});
