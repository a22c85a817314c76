/**
 * The package from its tarball, in a host app nobody here wrote the way this
 * repository is written: plain JavaScript, no TypeScript, no loader. The
 * README's snippets are the host's code (taken from the README itself), with
 * the host's own sign-in step, clients, keys and cookies. Relying site:
 * openid-client; Redis: real; letters: a real SMTP sink.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';
import { Redis } from 'ioredis';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { REDIS_URL } from '../helpers/redis.ts';
import { oauthError } from '../helpers/reference.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';
import { createHostApp, NODE_22_FLOOR, NODE_24, ROOT, run, startHostProcess, type HostApp, type HostProcess } from './app.ts';
import { anyInExports } from './no-any.ts';
import { checkTarball } from './tarball.ts';

const SITE = {
  client_id: 'host-site',
  client_secret: `host-site-secret-${randomBytes(8).toString('hex')}`,
  client_name: 'Host Site',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
  post_logout_redirect_uris: ['https://site.example/signed-out'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
};

/** The host's settings, as its deployment gives them (environment). */
function hostEnv(issuer: string, port: number, redisUrl: string, smtp: SmtpSink, signingKey: string): Record<string, string> {
  return {
    ISSUER: issuer,
    PORT: String(port),
    REDIS_URL: redisUrl,
    SMTP_URL: smtp.url,
    HOST_CLIENTS: JSON.stringify([SITE]),
    HOST_SIGNING_KEY: signingKey,
    HOST_COOKIE_KEY: 'host-cookie-key-0123456789abcdef',
  };
}

/**
 * An empty Redis database of its own: the host uses the plugin's default key
 * prefix, as a host would. Claimed with SET NX, so two runs on one Redis
 * (two checkouts testing at once) never share one.
 */
async function emptyDatabase(): Promise<{ url: string; client: Redis }> {
  const claim = 'osn-consumer-test:claim';
  for (let db = 15; db >= 1; db -= 1) {
    const url = new URL(REDIS_URL);
    url.pathname = `/${db}`;
    const client = new Redis(url.href, { maxRetriesPerRequest: 2 });
    if ((await client.set(claim, String(process.pid), 'EX', 1800, 'NX')) === 'OK') {
      if ((await client.dbsize()) === 1) return { url: url.href, client };
      await client.del(claim);
    }
    await client.quit();
  }
  throw new Error(`no empty database among 1-15 at ${REDIS_URL} for the consumer test`);
}

const basic = `Basic ${Buffer.from(`${SITE.client_id}:${SITE.client_secret}`).toString('base64')}`;

async function postForm(issuer: string, path: string, form: Record<string, string>) {
  const res = await fetch(`${issuer}${path}`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) as Record<string, unknown> : undefined };
}

async function notify(issuer: string, body: Record<string, string>) {
  const res = await fetch(`${issuer}/api/notify`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Record<string, unknown> };
}

function discover(issuer: string): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(issuer), SITE.client_id, { client_secret: SITE.client_secret },
    oidc.ClientSecretBasic(SITE.client_secret), { execute: [oidc.allowInsecureRequests] });
}

const isCallback = (u: string) => u.startsWith(SITE.redirect_uris[0]!);

/** The relying site sends the browser to sign in: the host's own login page. */
async function startSignIn(config: oidc.Configuration, agent: Agent) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: SITE.redirect_uris[0]!,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const loginPage = await agent.follow(await agent.get(url.href), isCallback);
  expect(loginPage.status, loginPage.body).to.equal(200);
  return { loginPage, verifier, state };
}

/** The host's own login page takes a name; consent is the host's. */
async function signIn(config: oidc.Configuration, agent: Agent, login: string) {
  const { loginPage, verifier, state } = await startSignIn(config, agent);
  const done = await agent.follow(await agent.submit(loginPage, formFor(loginPage.body, '/login'), { login }), isCallback);
  expect(done.location, `${done.status} ${done.url}\n${done.body}`).to.match(/^https:\/\/site\.example\/callback\?code=/);
  return oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
}

const until = async (what: string, check: () => boolean, timeoutMs = 20_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

const notificationIds = (smtp: SmtpSink, to: string) => smtp.letters
  .filter((l) => JSON.stringify(l.to).includes(to))
  .map((l) => String(l.headers.get('x-notification-id')));

describe('the package from its tarball, in a host app (npm pack, npm install, README snippets)', function () {
  this.timeout(600_000);

  let app: HostApp;
  let db: { url: string; client: Redis };
  let signingKey: string;
  const processes: HostProcess[] = [];

  before(async () => {
    const started = Date.now();
    app = await createHostApp();
    console.log(`      (packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s: ${app.pack.entryCount} files)`);
    db = await emptyDatabase();
    signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  });

  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    if (db) {
      await db.client.flushdb();
      await db.client.quit();
    }
    app?.remove();
  });

  it('holds only the build, the sources its declaration maps name, README, LICENSE, CHANGELOG and package.json, and every file it loads at run time', () => {
    expect(checkTarball(app.pack, join(app.dir, 'node_modules/oidc-signout-notify'))).to.deep.equal([]);
  });

  it('installs one copy of oidc-provider and of ioredis in the host app (peer dependencies)', async () => {
    for (const name of ['oidc-provider', 'ioredis']) {
      const ls = await run(process.execPath, [process.env.npm_execpath ?? 'npm', 'ls', name, '--all', '--parseable'], { cwd: app.dir, env: process.env });
      const copies = ls.stdout.split('\n').filter((line) => line.endsWith(`node_modules/${name}`));
      expect(copies, `${name}: ${ls.stdout}`).to.deep.equal([join(app.dir, 'node_modules', name)]);
    }
  });

  const runtimes = [
    { name: `${process.versions.node} (this project's)`, version: process.versions.node, node: () => process.execPath },
    { name: `${NODE_22_FLOOR} (the engines floor)`, version: NODE_22_FLOOR, node: () => app.node22Floor },
    { name: NODE_24, version: NODE_24, node: () => app.node24 },
  ];
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
        const env = hostEnv(issuer, port, db.url, smtp, signingKey);
        service = startHostProcess(app, runtime.node(), 'server.js', env);
        worker = startHostProcess(app, runtime.node(), 'letter-worker.js', env);
        processes.push(service, worker);
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
        });
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

  describe('the letter worker as a process of its own (README letter-worker.js)', () => {
    let issuer: string;
    let smtp: SmtpSink;
    let service: HostProcess;

    before(async () => {
      // The sink takes 300 ms to accept each letter, so a SIGTERM finds letters in hand.
      smtp = await startSmtpSink({ delayMs: 300 });
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      service = startHostProcess(app, process.execPath, 'server.js', hostEnv(issuer, port, db.url, smtp, signingKey));
      processes.push(service);
      await service.waitFor(/^listening /);
    });
    after(async () => {
      service?.child.kill('SIGTERM');
      await service?.exited;
      await smtp?.close();
    });

    it('sends what the service queued; SIGTERM mid-run finishes the letters in hand, and the next worker sends the rest, each once', async () => {
      const config = await discover(issuer);
      const tokens = await signIn(config, new Agent(), 'bruno');
      const sub = tokens.claims()!.sub;
      for (let i = 1; i <= 12; i += 1) {
        const res = await notify(issuer, { sub, category: 'transactional', title: `Batch ${i}`, body: `Letter ${i} of 12.` });
        expect(res.status).to.equal(202);
      }
      // Nothing is sent by the service itself.
      await new Promise((r) => setTimeout(r, 500));
      expect(smtp.letters.length).to.equal(0);

      const env = hostEnv(issuer, 0, db.url, smtp, signingKey);
      const first = startHostProcess(app, process.execPath, 'letter-worker.js', env);
      processes.push(first);
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

      const second = startHostProcess(app, process.execPath, 'letter-worker.js', env);
      processes.push(second);
      await until('all twelve letters', () => notificationIds(smtp, 'bruno@example.com').length >= 12, 30_000);
      await new Promise((r) => setTimeout(r, 1000));
      const ids = notificationIds(smtp, 'bruno@example.com');
      expect(ids).to.have.length(12);
      expect(new Set(ids).size).to.equal(12);
      expect(smtp.letters.map((l) => l.subject).sort()).to.deep.equal(Array.from({ length: 12 }, (_, i) => `Batch ${i + 1}`).sort());
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    });
  });

  it('lets no `any` reach a host through the types of any entry point', () => {
    const installed = join(app.dir, 'node_modules/oidc-signout-notify');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string }> };
    const entries = Object.values(manifest.exports).flatMap((target) => (typeof target === 'object' && target.types ? [target.types] : []));
    expect(entries).to.deep.equal([
      './dist/src/index.d.ts', './dist/src/worker.d.ts', './dist/src/pages.d.ts', './dist/src/store-kit.d.ts',
      './dist/adapters/redis.d.ts', './dist/adapters/memory.d.ts',
    ]);
    expect(anyInExports(installed, entries)).to.deep.equal([]);
  });

  it('type-checks a strict TypeScript host (skipLibCheck false) using the README snippets and the exported types', async () => {
    const tsc = join(app.dir, 'node_modules/typescript/bin/tsc');
    const ran = await run(process.execPath, [tsc, '-p', app.tsDir], { cwd: app.tsDir });
    expect(`${ran.stdout}${ran.stderr}`).to.equal('');
    expect(ran.code).to.equal(0);
  });

  it('states the tarball\'s file count and size in the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const stated = /The tarball holds \*\*(\d+) files\*\*, ([\d.]+) kB packed \(([\d.]+) kB unpacked\)/.exec(readme);
    expect(stated, 'README: "The tarball holds **N files**, X kB packed (Y kB unpacked)"').to.not.equal(null);
    expect(Number(stated![1])).to.equal(app.pack.entryCount);
    expect(Number(stated![2]) * 1000).to.be.closeTo(app.pack.size, app.pack.size * 0.1);
    expect(Number(stated![3]) * 1000).to.be.closeTo(app.pack.unpackedSize, app.pack.unpackedSize * 0.1);
    const parts = /`dist\/` \((\d+) modules as JavaScript, declarations\s+and declaration maps, and (\d+) Lua scripts\) and the (\d+) TypeScript sources/.exec(readme);
    expect(parts, 'README: "`dist/` (N modules as JavaScript, ..., and M Lua scripts) and the N TypeScript sources"').to.not.equal(null);
    const files = app.pack.files.map((f) => f.path);
    expect(parts!.slice(1).map(Number)).to.deep.equal([
      files.filter((f) => f.startsWith('dist/') && f.endsWith('.js')).length,
      files.filter((f) => f.endsWith('.lua')).length,
      files.filter((f) => !f.startsWith('dist/') && f.endsWith('.ts')).length,
    ]);
  });
});
