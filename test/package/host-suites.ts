/**
 * The consumer test's suites that run the host app's processes: the JavaScript
 * host on each Node runtime, and the letter worker as a process of its own.
 * Registered by test/package/consumer.test.ts, which packs and installs once.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import * as oidc from 'openid-client';
import { Agent, formFor } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { oauthError } from '../helpers/reference.ts';
import type { OpenApiDocument } from '../helpers/openapi.ts';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../helpers/smtp.ts';
import { startHostProcess, type HostApp, type HostProcess } from './app.ts';
import { SITE, hostEnv, postForm, notify, discover, isCallback, startSignIn, signIn, until, notificationIds } from './host-calls.ts';

/** What the suites share, filled by the consumer test's before hook. */
export interface Installed {
  app: HostApp; db: { url: string; client: Redis }; signingKey: string; processes: HostProcess[];
  /** The OpenAPI document the tarball ships (oidc-signout-notify/openapi.json), as text and parsed. */
  openApiText: string; openapi: OpenApiDocument;
}

export function javaScriptHostSuites(installed: Installed, runtimes: { name: string; version: string; node: () => string }[]): void {
  for (const runtime of runtimes) {
    describe(`the JavaScript host on Node ${runtime.name}`, () => {
      let issuer: string;
      let smtp: SmtpSink;
      let service: HostProcess;
      let worker: HostProcess;
      let config: oidc.Configuration;

      before(async () => {
        smtp = await startSmtpSink();
        const port = await freePort();
        issuer = `http://127.0.0.1:${port}`;
        const env = hostEnv(issuer, port, installed.db.url, smtp, installed.signingKey);
        service = startHostProcess(installed.app, runtime.node(), 'server.js', env);
        worker = startHostProcess(installed.app, runtime.node(), 'letter-worker.js', env);
        installed.processes.push(service, worker);
        const listening = await service.waitFor(/^listening /);
        expect(listening).to.equal(`listening v${runtime.version}`);
        await worker.waitFor(/"letter worker started"/);
        config = await discover(issuer);
      });

      after(async () => {
        service?.child.kill('SIGTERM');
        worker?.child.kill('SIGTERM');
        await Promise.all([service?.exited, worker?.exited]);
        await smtp?.close();
      });

      it('starts without warnings about the runtime, and answers discovery with the endpoints the plugin enables', () => {
        expect(service.lines.filter((l) => /unsupported runtime|ExperimentalWarning|DeprecationWarning/i.test(l))).to.deep.equal([]);
        const meta = config.serverMetadata();
        expect(meta.issuer).to.equal(issuer);
        expect(meta.revocation_endpoint).to.equal(`${issuer}/token/revocation`);
        expect(meta.introspection_endpoint).to.equal(`${issuer}/token/introspection`);
        expect(meta.end_session_endpoint).to.equal(`${issuer}/session/end`);
      });

      it('signs in through the host\'s own login step, and its console API answers for the signed-in person', async () => {
        const agent = new Agent();
        const tokens = await signIn(config, agent, 'alice');
        expect(tokens.refresh_token).to.be.a('string');
        expect(tokens.claims()!.sub).to.equal('alice');
        const res = await agent.request('GET', `${issuer}/console/api/sites`, undefined, { accept: 'application/json' });
        expect(res.status).to.equal(200);
        const sites = JSON.parse(res.body) as { clientId: string; status: string }[];
        expect(sites.map((s) => [s.clientId, s.status])).to.deep.equal([['host-site', 'connected']]);
        const anonymous = await new Agent().request('GET', `${issuer}/console/api/sites`, undefined, { accept: 'application/json' });
        expect(anonymous.status).to.equal(401);
        expect(JSON.parse(anonymous.body)).to.include({ error: 'login_required' });
      });

      it('serves the host\'s login page built with /pages and /store: the service\'s layout and CSP, its CSRF token, form limit and error pages, wrong names counted in the plugin\'s store', async () => {
        const agent = new Agent();
        const { loginPage } = await startSignIn(config, agent);
        const style = /<style>([\s\S]*?)<\/style>/.exec(loginPage.body)![1]!;
        const styleHash = createHash('sha256').update(style, 'utf8').digest('base64');
        expect(loginPage.headers.get('content-security-policy')).to.equal(
          `default-src 'none'; style-src 'sha256-${styleHash}'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
        );
        expect(loginPage.headers.get('cache-control')).to.equal('no-store');
        expect(loginPage.body).to.include('<html lang="en" dir="ltr">').and.include('<title>Sign in — Host Sign-in</title>');
        const form = formFor(loginPage.body, '/login');
        expect(Object.keys(form.fields)).to.deep.equal(['csrf', 'login']);
        expect(form.fields.csrf).to.match(/^[\w-]{43}$/);
        const post = (fields: Record<string, string>) => agent.request('POST', new URL(form.action, loginPage.url).href, fields);

        const noToken = await post({ login: 'alice' });
        expect(noToken.status).to.equal(400);
        expect(noToken.body).to.include('This form is out of date. Reload the page and try again.');
        const tooLarge = await post({ ...form.fields, login: 'a'.repeat(20_000) });
        expect(tooLarge.status).to.equal(400);
        expect(tooLarge.body).to.include('The request was incomplete or not valid.');
        for (let i = 0; i < 2; i += 1) {
          const wrong = await post({ ...form.fields, login: 'nobody' });
          expect(wrong.status).to.equal(400);
          expect(wrong.body).to.include('<p id="login-error" class="error" role="alert">No such person here.</p>');
        }
        const refused = await post({ ...form.fields, login: 'nobody' });
        expect(refused.status).to.equal(429);
        expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 600);
        expect(refused.body).to.include('The request could not be completed.');
        const right = await agent.follow(await post({ ...form.fields, login: 'alice' }), isCallback);
        expect(right.location).to.match(/^https:\/\/site\.example\/callback\?code=/);
      });

      it('rotates refresh tokens, and a reused one ends the whole chain (invalid_grant) and reaches the host as an event', async () => {
        const tokens = await signIn(config, new Agent(), 'alice');
        const first = tokens.refresh_token!;
        const rotated = await oidc.refreshTokenGrant(config, first);
        expect(rotated.refresh_token).to.be.a('string').and.not.equal(first);
        // Once the rotated token was used, `first` is theft (before that, the reuse leeway would answer it again).
        const next = await oidc.refreshTokenGrant(config, rotated.refresh_token!);
        expect(await oauthError(oidc.refreshTokenGrant(config, first))).to.equal('invalid_grant');
        expect(await oauthError(oidc.refreshTokenGrant(config, next.refresh_token!))).to.equal('invalid_grant');
        const line = await service.waitFor(/^event signout_notify\.replay_detected /);
        const event = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>;
        expect(event).to.include({ model: 'RefreshToken', clientId: 'host-site', accountId: 'alice' });
        expect(event.grantId).to.be.a('string');
        expect(line).to.not.include(first);
      });

      it('revokes one token and introspects: active for a live token, false after revocation', async () => {
        const tokens = await signIn(config, new Agent(), 'alice');
        const live = await postForm(issuer, '/token/introspection', { token: tokens.access_token });
        expect(live.status).to.equal(200);
        expect(live.json).to.include({ active: true, client_id: 'host-site', sub: 'alice' });
        const revoked = await postForm(issuer, '/token/revocation', { token: tokens.refresh_token! });
        expect([revoked.status, revoked.text]).to.deep.equal([200, '']);
        expect((await postForm(issuer, '/token/introspection', { token: tokens.refresh_token! })).json).to.deep.equal({ active: false });
        expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
        expect((await postForm(issuer, '/token/introspection', { token: tokens.access_token })).json).to.include({ active: true });
      });

      it('takes a notification (202) and the worker process sends the letter, whose unsubscribe link the service accepts', async () => {
        const tokens = await signIn(config, new Agent(), 'alice');
        const title = `Order shipped on Node ${runtime.version}`;
        const res = await notify(issuer, {
          sub: tokens.claims()!.sub, category: 'transactional', title, body: 'It arrives on Tuesday.', url: 'https://site.example/orders/1',
        }, installed.openapi);
        expect(res).to.deep.equal({ status: 202, json: { inApp: true, email: true, skipped: null } });
        const letter = await smtp.waitFor((l) => l.subject === title, 20_000);
        expect(JSON.stringify(letter.to)).to.include('alice@example.com');
        const header = letter.headerLines.find((l) => l.key === 'list-unsubscribe')!.line;
        const unsubscribe = /<([^>]+)>/.exec(header)![1]!;
        expect(unsubscribe.startsWith(`${issuer}/unsubscribe/`)).to.equal(true);
        const page = await fetch(unsubscribe);
        expect(page.status).to.equal(200);
        expect(await page.text()).to.include('Host Site');
      });

      it('serves the OpenAPI document it ships at /api/openapi.json (built: no generator at run time), and answers /api/notify as it says, a refusal too', async () => {
        const res = await fetch(`${issuer}/api/openapi.json`);
        expect([res.status, res.headers.get('content-type')]).to.deep.equal([200, 'application/json; charset=utf-8']);
        expect(await res.text()).to.equal(installed.openApiText);
        const refused = await notify(issuer, { sub: 'nobody', category: 'transactional', title: 'Hello', body: 'Hi.' }, installed.openapi);
        expect(refused).to.deep.equal({ status: 403, json: { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' } });
      });

      it('tells the person of a passkey the host added (plugin.securityNotice): an inbox entry and a letter in their language, no unsubscribe; the same passkey again the same day is held back', async () => {
        const agent = new Agent();
        await signIn(config, agent, 'bruno');
        const added = async () => {
          const res = await fetch(`${issuer}/host/passkey-added`, {
            method: 'POST',
            headers: { 'x-host-admin': 'host-cookie-key-0123456789abcdef', 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ accountId: 'bruno', name: `Laptop on Node ${runtime.version}`, ref: `credential-${runtime.version}` }),
          });
          return { status: res.status, json: await res.json() as unknown };
        };
        expect(await added()).to.deep.equal({ status: 200, json: { result: 'given' } });
        const letter = await smtp.waitFor((l) => JSON.stringify(l.to).includes('bruno@example.com') && (l.text ?? '').includes(`Laptop on Node ${runtime.version}`), 20_000);
        expect(letter.headers.get('content-language')).to.equal('de');
        expect(letter.headers.has('list-unsubscribe')).to.equal(false);
        expect(await added()).to.deep.equal({ status: 200, json: { result: 'held_back' } });
        const inbox = await agent.request('GET', `${issuer}/console/api/inbox`, undefined, { accept: 'application/json' });
        const items = (JSON.parse(inbox.body) as { items: { from?: string; notice?: string; category: string; body: string }[] }).items;
        const told = items.filter((i) => i.notice === 'passkey_added' && i.body.includes(`Laptop on Node ${runtime.version}`));
        expect(told.map(({ from, category }) => ({ from, category }))).to.deep.equal([{ from: 'service', category: 'security' }]);
      });

      it('ends the service session at /session/end with a hint: back on the registered address with state, the session\'s tokens dead', async () => {
        const agent = new Agent();
        const tokens = await signIn(config, agent, 'alice');
        const url = oidc.buildEndSessionUrl(config, {
          id_token_hint: tokens.id_token!, post_logout_redirect_uri: SITE.post_logout_redirect_uris[0]!, state: 'bye-1',
        });
        const page = await agent.get(url.href);
        expect(page.status).to.equal(200);
        const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
        expect(res.status).to.equal(303);
        expect(res.location).to.equal(`${SITE.post_logout_redirect_uris[0]}?state=bye-1`);
        expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
        const after = await agent.request('GET', `${issuer}/console/api/sites`, undefined, { accept: 'application/json' });
        expect(after.status).to.equal(401);
      });
    });
  }

}

/** One of the host app's scripts as a process on a free port (this project's Node), with an SMTP sink of its own; `stop()` ends both. */
export async function hostService(installed: Installed, script: string, opts: { smtp?: SmtpSinkOptions; env?: Record<string, string> } = {}) {
  const smtp = await startSmtpSink(opts.smtp);
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const service = startHostProcess(installed.app, process.execPath, script, { ...hostEnv(issuer, port, installed.db.url, smtp, installed.signingKey), ...opts.env });
  installed.processes.push(service);
  await service.waitFor(/^listening /);
  return {
    issuer, smtp, service,
    async stop() {
      service.child.kill('SIGTERM');
      await service.exited;
      await smtp.close();
    },
  };
}

export function letterWorkerSuite(installed: Installed): void {
  describe('the letter worker as a process of its own (README letter-worker.js)', () => {
    let issuer: string;
    let smtp: SmtpSink;
    let running: Awaited<ReturnType<typeof hostService>> | undefined;

    before(async () => {
      // The sink takes 300 ms to accept each letter, so a SIGTERM finds letters in hand.
      running = await hostService(installed, 'server.js', { smtp: { delayMs: 300 } });
      ({ issuer, smtp } = running);
    });
    after(() => running?.stop());

    it('sends what the service queued; SIGTERM mid-run finishes the letters in hand, and the next worker sends the rest, each once', async () => {
      const config = await discover(issuer);
      const tokens = await signIn(config, new Agent(), 'bruno');
      const sub = tokens.claims()!.sub;
      for (let i = 1; i <= 12; i += 1) {
        const res = await notify(issuer, { sub, category: 'transactional', title: `Batch ${i}`, body: `Letter ${i} of 12.` }, installed.openapi);
        expect(res.status).to.equal(202);
      }
      // Nothing is sent by the service itself.
      await new Promise((r) => setTimeout(r, 500));
      expect(smtp.letters.length).to.equal(0);

      const env = hostEnv(issuer, 0, installed.db.url, smtp, installed.signingKey);
      const first = startHostProcess(installed.app, process.execPath, 'letter-worker.js', env);
      installed.processes.push(first);
      // SIGTERM while the worker has letters in hand: right after a batch of four is
      // accepted, the next may not be taken yet, and there would be nothing to finish.
      await until('four letters, and more in transfer', () => notificationIds(smtp, 'bruno@example.com').length >= 4 && smtp.inTransfer > 0);
      const atSigterm = notificationIds(smtp, 'bruno@example.com').length;
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);
      const byFirst = notificationIds(smtp, 'bruno@example.com').length;
      expect(first.lines.some((l) => l.includes('"letter worker stopped"')), first.lines.join('\n')).to.equal(true);
      // Letters in hand at SIGTERM were finished, not cut off; some were left for the next worker.
      expect(byFirst).to.be.above(atSigterm);
      expect(byFirst).to.be.below(12);
      expect(smtp.abandoned).to.equal(0);

      const second = startHostProcess(installed.app, process.execPath, 'letter-worker.js', env);
      installed.processes.push(second);
      await until('all twelve letters', () => notificationIds(smtp, 'bruno@example.com').length >= 12, 30_000);
      await new Promise((r) => setTimeout(r, 1000));
      const ids = notificationIds(smtp, 'bruno@example.com');
      expect(ids).to.have.length(12);
      expect(new Set(ids).size).to.equal(12);
      const subjects = smtp.letters.map((l) => l.subject ?? '');
      expect(subjects.filter((s) => s.startsWith('Batch ')).sort()).to.deep.equal(Array.from({ length: 12 }, (_, i) => `Batch ${i + 1}`).sort());
      // Besides them, at most the service's notice of bruno's sign-in from this new browser.
      expect(subjects.length - 12).to.be.at.most(1);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    });
  });

}
