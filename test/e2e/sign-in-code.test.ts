/**
 * The reference provider's emailed-code sign-in: the login page, the letter with the code,
 * and the code step (wrong codes, attempts, a new code, another address, a code used once).
 */
import { expect } from 'chai';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, formFor, forms } from '../helpers/agent.ts';
import { startHarness, type Harness } from '../helpers/reference.ts';
import { alert, begin, isCallback, lettersTo, recipients, REDIRECT, requestCode, SERVICE, settle, site, wrongCode } from '../helpers/sign-in-flow.ts';

describe('reference provider, emailed-code sign-in (Redis)', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('sign-in-code', { clients: [site] });
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
});
