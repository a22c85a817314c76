/**
 * Every combination of `prompt` and `max_age` a relying site may send ends in
 * one pass, with one emailed code at most: for a new person, a returning one
 * and another person on the same browser, with and without offline_access.
 * openid-client is the site; the agent is the person's browser without
 * JavaScript (it submits oidc-provider's own auto-submitting forms by hand).
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { Agent, formFor, forms, type Response } from '../helpers/agent.ts';
import { discover, RP, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('prompts');
const siteB = siteClient('prompts-b');
const isCallback = (u: string) => u.startsWith(RP);

type Step = 'email' | 'code' | 'consent' | 'select' | 'switch';

interface Outcome {
  steps: Step[];
  letters: number;
  /** The callback's parameters. */
  callback: URLSearchParams;
  tokens?: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
}

describe('interactions that always finish: prompt and max_age combinations', function () {
  this.timeout(60_000);
  let h: Harness;
  let config: oidc.Configuration;
  let configB: oidc.Configuration;
  let n = 0;

  before(async () => {
    // Every person here signs in from 127.0.0.1: the per-IP limits are lifted (test/e2e/sign-in-limits.test.ts tests them).
    const many = { limit: 10_000, windowMs: 60_000 };
    h = await startHarness('prompts', { clients: [site, siteB], loginCodeLimits: { ...defaultLoginCodeLimits, perIp: many, checksPerIp: many } });
    config = await discover(h, site);
    configB = await discover(h, siteB);
  });
  after(() => h.close());

  /** Sends the browser through one authorization request; `email` is who types their address when asked. */
  async function authorize(agent: Agent, email: string, params: Record<string, string>, choose: 'continue' | 'other' = 'continue', at = config): Promise<Outcome> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(at, {
      redirect_uri: `${RP}/${at.clientMetadata().client_id}/callback`,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...params,
    });
    const lettersBefore = h.smtp.letters.length;
    const steps: Step[] = [];
    let code = '';
    let res: Response = await agent.follow(await agent.get(url.href), isCallback);
    for (let i = 0; i < 12 && !(res.location && isCallback(res.location)); i += 1) {
      const body = res.body;
      let next: Response;
      if (body.includes('<title>Submitting Callback</title>')) {
        // oidc-provider's form_post (here: ending the previous person's session); a browser submits it by itself.
        steps.push('switch');
        next = await agent.submit(res, forms(body)[0]!);
      } else if (body.includes('name="email"')) {
        steps.push('email');
        const sent = h.smtp.letters.length;
        next = await agent.submit(res, formFor(body, '/email'), { email });
        const letter = await h.smtp.waitFor((l) => h.smtp.letters.indexOf(l) >= sent && JSON.stringify(l.to).includes(email));
        code = /\b(\d{6})\b/.exec(letter.subject ?? '')![1]!;
      } else if (body.includes('name="code"')) {
        steps.push('code');
        next = await agent.submit(res, formFor(body, '/code'), { code });
      } else if (body.includes('/confirm"')) {
        steps.push('consent');
        next = await agent.submit(res, formFor(body, '/confirm'));
      } else if (body.includes('/select"')) {
        steps.push('select');
        if (choose === 'continue') next = await agent.submit(res, formFor(body, '/select'));
        else next = await agent.get(new URL(/href="([^"]*\?account=other)"/.exec(body)![1]!.replace(/&amp;/g, '&'), res.url).href);
      } else {
        throw new Error(`unexpected page ${res.status} ${res.url}: ${body.slice(0, 600)}`);
      }
      res = await agent.follow(next, isCallback);
    }
    expect(res.location, `reached the site (steps ${steps.join(' > ')})`).to.satisfy((l: string | undefined) => l !== undefined && isCallback(l));
    const callback = new URL(res.location!);
    const outcome: Outcome = { steps, letters: h.smtp.letters.length - lettersBefore, callback: callback.searchParams };
    if (callback.searchParams.has('code')) {
      outcome.tokens = await oidc.authorizationCodeGrant(at, callback, { pkceCodeVerifier: verifier, expectedState: state });
    }
    return outcome;
  }

  const fresh = () => `p${(n += 1)}-${Date.now()}@example.com`;
  const subOf = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;

  /** A person signed in on this browser, with the site's consent for `scope`. */
  async function returning(scope: string): Promise<{ agent: Agent; email: string }> {
    const agent = new Agent();
    const email = fresh();
    const first = await authorize(agent, email, { scope, prompt: 'consent' });
    expect(first.steps).to.deep.equal(['email', 'code', 'consent']);
    return { agent, email };
  }

  for (const offline of [false, true]) {
    const scope = offline ? 'openid email offline_access' : 'openid email';
    // oidc-provider grants offline_access only with prompt=consent (OpenID Connect Core 11).
    const withConsent = (prompt: string) => (offline && !prompt.includes('consent') ? `${prompt} consent`.trim() : prompt);

    describe(offline ? 'with offline_access' : 'without offline_access', () => {
      const newPerson: [string, Record<string, string>][] = [
        ['no prompt', {}],
        ['prompt=login', { prompt: 'login' }],
        ['prompt=consent', { prompt: 'consent' }],
        ['prompt=login consent', { prompt: 'login consent' }],
        ['prompt=select_account', { prompt: 'select_account' }],
        ['max_age=0', { max_age: '0' }],
        ['prompt=login consent, max_age=0', { prompt: 'login consent', max_age: '0' }],
      ];
      for (const [name, params] of newPerson) {
        it(`a new person, ${name}: address, code, consent, site; one letter`, async () => {
          const email = fresh();
          const prompt = withConsent(params.prompt ?? '');
          const out = await authorize(new Agent(), email, { scope, ...params, ...(prompt ? { prompt } : {}) });
          expect(out.steps).to.deep.equal(['email', 'code', 'consent']);
          expect(out.letters).to.equal(1);
          expect(out.tokens!.claims()!.sub).to.equal(await subOf(email));
          expect(out.tokens!.scope?.split(' ').includes('offline_access')).to.equal(offline);
        });
      }

      it('a new person, prompt=none: login_required at the site, no page, no letter', async () => {
        const out = await authorize(new Agent(), fresh(), { scope, prompt: 'none' });
        expect(out.steps).to.deep.equal([]);
        expect(out.letters).to.equal(0);
        expect(out.callback.get('error')).to.equal('login_required');
      });

      const returningCases: [string, Record<string, string>, Step[]][] = [
        ['no prompt', {}, offline ? ['consent'] : []],
        ['prompt=none', { prompt: 'none' }, []],
        ['prompt=login', { prompt: 'login' }, offline ? ['email', 'code', 'consent'] : ['email', 'code']],
        ['prompt=consent', { prompt: 'consent' }, ['consent']],
        ['prompt=login consent', { prompt: 'login consent' }, ['email', 'code', 'consent']],
        ['prompt=select_account', { prompt: 'select_account' }, offline ? ['select', 'consent'] : ['select']],
        ['max_age=0', { max_age: '0' }, offline ? ['email', 'code', 'consent'] : ['email', 'code']],
        ['max_age=3600', { max_age: '3600' }, offline ? ['consent'] : []],
        ['prompt=login consent, max_age=0', { prompt: 'login consent', max_age: '0' }, ['email', 'code', 'consent']],
      ];
      for (const [name, params, expected] of returningCases) {
        it(`a returning person, ${name}: ${expected.join(', ') || 'straight to the site'}`, async () => {
          const { agent, email } = await returning(scope);
          const prompt = params.prompt === 'none' ? 'none' : withConsent(params.prompt ?? '');
          const out = await authorize(agent, email, { scope, ...params, ...(prompt ? { prompt } : {}) });
          if (offline && params.prompt === 'none') {
            // offline_access is only granted with prompt=consent, which prompt=none cannot have: dropped, not asked.
            expect(out.tokens!.scope?.split(' ')).to.not.include('offline_access');
          }
          expect(out.steps).to.deep.equal(expected);
          expect(out.letters).to.equal(expected.includes('email') ? 1 : 0);
          expect(out.tokens!.claims()!.sub).to.equal(await subOf(email));
        });
      }

      it('another person on the same browser, prompt=login: address, code, consent once; the site gets the new person', async () => {
        const { agent } = await returning(scope);
        const other = fresh();
        const out = await authorize(agent, other, { scope, prompt: withConsent('login') });
        // 'switch' is oidc-provider's own auto-submitting form that ends the first person's session.
        expect(out.steps).to.deep.equal(['email', 'code', 'switch', 'consent']);
        expect(out.letters).to.equal(1);
        expect(out.tokens!.claims()!.sub).to.equal(await subOf(other));
      });

      it('another person on the same browser, prompt=select_account, "Use another account": one letter, the new person', async () => {
        const { agent } = await returning(scope);
        const other = fresh();
        const out = await authorize(agent, other, { scope, prompt: withConsent('select_account') }, 'other');
        expect(out.steps).to.deep.equal(['select', 'email', 'code', 'switch', 'consent']);
        expect(out.letters).to.equal(1);
        expect(out.tokens!.claims()!.sub).to.equal(await subOf(other));
      });
    });
  }

  it('prompt=none with a session but no consent for this site yet answers consent_required at once', async () => {
    const agent = new Agent();
    const email = fresh();
    await authorize(agent, email, { scope: 'openid email' });
    const out = await authorize(agent, email, { scope: 'openid email', prompt: 'none' }, 'continue', configB);
    expect(out.steps).to.deep.equal([]);
    expect(out.letters).to.equal(0);
    expect(out.callback.get('error')).to.equal('consent_required');
  });

  it('puts the email of the email scope in the ID token (conformIdTokenClaims: false)', async () => {
    const email = fresh();
    const out = await authorize(new Agent(), email, { scope: 'openid email' });
    expect(out.tokens!.claims()).to.include({ email, email_verified: true });
    const bare = await authorize(new Agent(), fresh(), { scope: 'openid' });
    expect(bare.tokens!.claims()).to.not.have.property('email');
  });
});

