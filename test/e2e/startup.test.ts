import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Variables start.ts reads; the newcomer has none of them set. */
const SETTINGS = ['PORT', 'ISSUER', 'REDIS_URL', 'SMTP_URL', 'MAIL_FROM', 'CONFIG_FILE', 'JWKS_FILE', 'JWKS', 'COOKIE_KEYS', 'TRUST_PROXY', 'SERVICE_NAME', 'DEMO_PORT', 'ALLOW_PRIVATE_FETCH_HOSTS', 'MAIL_OUTBOX'];

interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const runs = new Set<Run>();

/** `node examples/start.ts` from the repository root, as a newcomer runs it. */
function start(env: Record<string, string>): Run {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SETTINGS) delete base[name];
  const child = spawn(process.execPath, ['examples/start.ts'], {
    cwd: root,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let both = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; both += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; both += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const run: Run = { child, stdout: () => out, stderr: () => err, output: () => both, exited };
  runs.add(run);
  return run;
}

/** Ends a process this file started: SIGTERM, then SIGKILL if it lingers. */
async function stop(run: Run): Promise<void> {
  runs.delete(run);
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 3000);
  await run.exited;
  clearTimeout(timer);
}

async function stopAll(): Promise<void> {
  await Promise.all([...runs].map(stop));
}

/** Waits until the process output matches, failing early if it exits. */
async function waitForOutput(run: Run, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(`start.ts exited (${run.child.exitCode ?? run.child.signalCode}) before printing ${pattern}:\n${run.output()}`);
    }
    if (Date.now() > deadline) throw new Error(`start.ts did not print ${pattern} within ${timeoutMs} ms:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for the process to exit on its own within `ms`; kills it and fails otherwise. */
async function exitWithin(run: Run, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); });
  const result = await Promise.race([run.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    await stop(run);
    throw new Error(`start.ts still running after ${ms} ms:\n${run.output()}`);
  }
  runs.delete(run);
  return result;
}

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
    expect(run.stdout()).to.include('Back-channel logout may reach these hosts on private addresses: localhost.');
    // An http issuer: nothing to say about Secure cookies.
    expect(run.output()).to.not.include('COOKIES WITHOUT Secure');
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
    const notified = await fetch(`${base}/api/notify`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ sub, category: 'transactional', title: 'Welcome', body: 'Thanks for signing up.' }),
    });
    expect(await notified.json()).to.deep.equal({ inApp: true, email: true, skipped: null });
    await waitForOutput(run, /From: Demo Site via Sign-in service\nTo: newcomer@example\.com\nSubject: Welcome\n/, 5000);
    expect(run.output().lastIndexOf('Subject: Welcome')).to.be.greaterThan(before);
  });
});

describe('start.ts with an issuer that is not on localhost', () => {
  after(stopAll);

  it('refuses to start without SMTP_URL (letters hold sign-in codes) unless MAIL_OUTBOX=log', async () => {
    const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test' });
    const { code } = await exitWithin(run, 5000);
    expect(code).to.equal(1);
    expect(run.stderr().trim()).to.equal('Configuration error: environment: SMTP_URL: required for the issuer https://id.example.test (letters hold sign-in codes); set MAIL_OUTBOX=log to print them to the log instead');
  });

  it('with MAIL_OUTBOX=log starts, warns loudly, and lets back-channel logout reach no private host (the demo site on localhost included)', async () => {
    const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', TRUST_PROXY: '1' });
    await waitForOutput(run, /^Identity provider listening on https:\/\/id\.example\.test /m);
    expect(run.stderr()).to.include('LETTERS ARE PRINTED TO THE LOG');
    expect(run.stderr()).to.include('Back-channel logout to the demo site (localhost) is refused for this issuer; set ALLOW_PRIVATE_FETCH_HOSTS=localhost to allow it.');
    expect(run.output()).to.not.include('may reach these hosts');
    await stop(run);
  });

  it('refuses an https issuer without TRUST_PROXY: it serves plain HTTP, and its cookies would go out without Secure', async () => {
    for (const trust of [{}, { TRUST_PROXY: '0' }, { TRUST_PROXY: 'false' }] as Record<string, string>[]) {
      const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', ...trust });
      const { code } = await exitWithin(run, 5000);
      expect({ trust, code, stderr: run.stderr().trim() }).to.deep.equal({
        trust, code: 1,
        stderr: 'Configuration error: environment: TRUST_PROXY: required for the https issuer https://id.example.test: this server speaks plain HTTP, so TLS ends at a proxy in front, and without trusting it cookies go out without Secure; set the number of proxies, or their addresses',
      });
    }
  });

  it('with TRUST_PROXY sets Secure on the cookies of a request the proxy received over TLS, and says nothing of Secure', async () => {
    const port = await freePort();
    const run = start({ PORT: String(port), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', TRUST_PROXY: '1' });
    await waitForOutput(run, /^Identity provider listening on /m);
    // The console sends the browser to sign in: the authorization request sets the interaction's cookies.
    const console = await fetch(`http://localhost:${port}/console`, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
    const auth = new URL(console.headers.get('location')!);
    expect(auth.origin).to.equal('https://id.example.test');
    const cookiesOf = async (headers: Record<string, string>) => {
      const res = await fetch(`http://localhost:${port}${auth.pathname}${auth.search}`, { redirect: 'manual', headers });
      expect(res.status).to.equal(303);
      return res.headers.getSetCookie().map((c) => c.split(';').map((part) => part.trim().toLowerCase()).includes('secure'));
    };
    const overTls = await cookiesOf({ 'x-forwarded-proto': 'https' });
    expect(overTls.length).to.be.at.least(1);
    expect(overTls.every(Boolean), 'every cookie Secure').to.equal(true);
    // Without the proxy's word, a plain HTTP request gets none.
    expect((await cookiesOf({})).some(Boolean)).to.equal(false);
    expect(run.output()).to.not.include('COOKIES WITHOUT Secure');
    await stop(run);
  });

  it('starts an https issuer on loopback (development) without TRUST_PROXY, and the plugin warns loudly about Secure', async () => {
    const port = await freePort();
    const run = start({ PORT: String(port), DEMO_PORT: String(await freePort()), ISSUER: `https://localhost:${port}` });
    await waitForOutput(run, /^Identity provider listening on /m);
    expect(run.stderr()).to.include(`oidc-signout-notify: COOKIES WITHOUT Secure BEHIND A TLS PROXY: the issuer https://localhost:${port} is https but provider.proxy is not set`);
    await stop(run);
  });
});

describe('quick start: bad configuration stops start-up with one clear message', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'osn-startup-'));
  });
  afterEach(stopAll);
  after(() => rm(dir, { recursive: true, force: true }));

  /** Runs start.ts to its exit; returns the single configuration error line. */
  async function refused(env: Record<string, string>): Promise<string> {
    const run = start(env);
    const { code, signal } = await exitWithin(run, 5000);
    expect({ code, signal }, run.output()).to.deep.equal({ code: 1, signal: null });
    expect(run.stdout(), 'stdout').to.equal('');
    const lines = run.stderr().split('\n').filter((l) => l !== '');
    expect(lines, run.stderr()).to.have.length(1);
    expect(lines[0]).to.match(/^Configuration error: /);
    expect(run.output()).to.not.match(/^\s+at /m);
    return lines[0]!;
  }

  async function configFile(name: string, content: unknown): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(content));
    return path;
  }

  it('PORT=notanumber names PORT', async () => {
    const line = await refused({ PORT: 'notanumber' });
    expect(line).to.match(/^Configuration error: environment: PORT: \S/);
  });

  it('a client without client_id names clients[0].client_id', async () => {
    const path = await configFile('no-client-id.json', {
      clients: [{ client_name: 'Nameless', redirect_uris: ['http://localhost:3001/callback'] }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.match(new RegExp(`^Configuration error: CONFIG_FILE ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: clients\\[0\\]\\.client_id: \\S`));
  });

  it('a missing CONFIG_FILE names CONFIG_FILE and the path', async () => {
    const path = join(dir, 'does-not-exist.json');
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE: cannot read ${path} (ENOENT)`);
  });

  it('an organization naming an unknown client names organizations[0].clients[0]', async () => {
    const path = await configFile('unknown-org-client.json', {
      clients: [{ client_id: 'known', redirect_uris: ['http://localhost:3001/callback'] }],
      organizations: [{ id: 'org-1', name: 'Org', admins: ['admin@example.com'], members: [], clients: ['nope'] }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE ${path}: organizations[0].clients[0]: unknown client "nope"`);
  });

  it('an upstream whose issuer is plain http off loopback names upstreams[0].issuer', async () => {
    const path = await configFile('http-upstream.json', {
      clients: [],
      upstreams: [{ id: 'social', name: 'Social', issuer: 'http://social.example', client_id: 'a', client_secret: 'b' }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE ${path}: upstreams[0].issuer: must be an https:// URL (http:// on localhost or 127.0.0.1 only, for development)`);
  });
});
