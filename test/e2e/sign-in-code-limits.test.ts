/**
 * The reference provider's emailed-code sign-in: a code that expired, and the limits on
 * code requests per address and per IP (429 with Retry-After, and no letter).
 */
import { expect } from 'chai';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { t } from '../../src/i18n/index.ts';
import { Agent, formFor, type Response } from '../helpers/agent.ts';
import { startHarness } from '../helpers/reference.ts';
import { alert, begin, lettersTo, requestCode, settle, site } from '../helpers/sign-in-flow.ts';

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
