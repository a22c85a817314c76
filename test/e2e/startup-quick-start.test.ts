/**
 * The quick start: `node examples/start.ts` with no REDIS_URL and no SMTP_URL
 * starts the provider and the demo site on localhost, on the embedded store,
 * and prints its letters to its output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { openApiJson } from '../../src/api/openapi/document.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { root, start, stopAll, waitForOutput, type Run } from '../helpers/start-process.ts';

const demo = (JSON.parse(readFileSync(join(root, 'examples/config.json'), 'utf8')) as { clients: { client_id: string; client_secret: string; redirect_uris: string[] }[] }).clients[0]!;

describe('quick start: node examples/start.ts with no REDIS_URL and no SMTP_URL', () => {
  let run: Run;
  let port: number;
  let base: string;
  let demoPort: number;

  before(async () => {
    port = await freePort();
    demoPort = await freePort();
    base = `http://localhost:${port}`;
    // The demo site goes to a free port too (its default, 3001, may be taken).
    run = start({ PORT: String(port), DEMO_PORT: String(demoPort) });
    const [line] = await waitForOutput(run, /^Identity provider listening on .*$/m);
    expect(line).to.equal(`Identity provider listening on ${base} (discovery: ${base}/.well-known/openid-configuration)`);
  });

  it('starts the demo relying site beside the provider', async () => {
    await waitForOutput(run, /^Demo site listening on .*$/m);
    const res = await fetch(`http://localhost:${demoPort}/`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.include('<h1>Demo site</h1>');
  });
  after(stopAll);

  it('serves discovery on localhost:PORT and warns loudly about the embedded store', async () => {
    const res = await fetch(`${base}/.well-known/openid-configuration`);
    expect(res.status).to.equal(200);
    const doc = await res.json() as Record<string, unknown>;
    expect(doc).to.include({
      issuer: base,
      end_session_endpoint: `${base}/session/end`,
      revocation_endpoint: `${base}/token/revocation`,
      introspection_endpoint: `${base}/token/introspection`,
    });
    expect(run.output()).to.include('EMBEDDED IN-MEMORY STORE');
    expect(run.stderr()).to.include('EMBEDDED IN-MEMORY STORE');
    // A localhost issuer lets back-channel logout reach the demo site on localhost, and says so.
    expect(run.stdout()).to.include('Back-channel logout and Shared Signals push may reach these hosts on private addresses: localhost.');
    // An http issuer: nothing to say about Secure cookies.
    expect(run.output()).to.not.include('COOKIES WITHOUT Secure');
  });

  it('serves the OpenAPI document from the sources, with no build: the bytes they generate', async () => {
    const res = await fetch(`${base}/api/openapi.json`);
    expect([res.status, res.headers.get('content-type')]).to.deep.equal([200, 'application/json; charset=utf-8']);
    expect(await res.text()).to.equal(openApiJson());
  });

  it('prints letters to its output (development outbox), with a code that signs in', async () => {
    const agent = new Agent();
    const verifier = oidc.randomPKCECodeVerifier();
    const auth = new URL('/auth', base);
    auth.search = new URLSearchParams({
      client_id: demo.client_id,
      redirect_uri: demo.redirect_uris[0]!,
      response_type: 'code',
      scope: 'openid',
      state: oidc.randomState(),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const redirect = await agent.get(auth.href);
    expect(redirect.status).to.equal(303);
    const login = await agent.get(redirect.location!);
    expect(login.status).to.equal(200);
    const sent = run.output().length;
    const posted = await agent.submit(login, formFor(login.body, '/email'), { email: 'newcomer@example.com' });
    expect(posted.status).to.equal(303);

    const [, letter] = await waitForOutput(run, /(----- letter \(development outbox\) -----[\s\S]*?----- end of letter -----)/, 5000);
    expect(run.output().indexOf('development outbox')).to.be.at.least(sent);
    expect(letter).to.include('\nTo: newcomer@example.com\n');
    const code = /\nSubject: (\d{6}) is your sign-in code for Sign-in service\n/.exec(letter!)?.[1];
    expect(code, letter).to.match(/^\d{6}$/);
    expect(letter).to.include(`\n    ${code}\n`);

    // The printed code is the real one.
    const codePage = await agent.get(posted.location!);
    const signedIn = await agent.submit(codePage, formFor(codePage.body, '/code'), { code: code! });
    expect(signedIn.status).to.equal(303);
    expect(signedIn.location).to.match(new RegExp(`^${base}/auth/[\\w-]+$`));

    // On to the site: consent, the code redeemed, and a notification whose
    // letter goes through the embedded store's in-process queue to the log.
    const consent = await agent.follow(await agent.get(signedIn.location!));
    const back = await agent.submit(consent, formFor(consent.body, '/confirm'));
    const callback = await agent.follow(back, (u) => u.startsWith(demo.redirect_uris[0]!));
    const code2 = new URL(callback.location!).searchParams.get('code')!;
    const basic = `Basic ${Buffer.from(`${demo.client_id}:${demo.client_secret}`).toString('base64')}`;
    const token = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code2, redirect_uri: demo.redirect_uris[0]!, code_verifier: verifier }),
    });
    expect(token.status).to.equal(200);
    const { sub } = JSON.parse(Buffer.from(((await token.json()) as { id_token: string }).id_token.split('.')[1]!, 'base64url').toString()) as { sub: string };
    const before = run.output().length;
    const notified = await documentedFetch(`${base}/api/notify`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ sub, category: 'transactional', title: 'Welcome', body: 'Thanks for signing up.' }),
    });
    expect(await notified.json()).to.deep.equal({ inApp: true, email: true, skipped: null });
    await waitForOutput(run, /From: Demo Site via Sign-in service\nTo: newcomer@example\.com\nSubject: Welcome\n/, 5000);
    expect(run.output().lastIndexOf('Subject: Welcome')).to.be.greaterThan(before);
  });
});
