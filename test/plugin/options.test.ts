import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import { createSignoutNotify, resolveOptions } from '../../src/index.ts';
import { refusal } from '../helpers/options.ts';
import type { Logger, SignoutNotify } from '../../src/index.ts';

const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

const contacts = async () => ({ email: 'someone@example.com' });

/** Collects what the plugin logs instead of printing it. */
function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    info: (message) => { lines.push({ level: 'info', message }); },
    warn: (message) => { lines.push({ level: 'warn', message }); },
    error: (message) => { lines.push({ level: 'error', message }); },
  };
}


describe('plugin options (resolveOptions / createSignoutNotify)', () => {
  const plugins: SignoutNotify[] = [];
  const make = (input: Parameters<typeof createSignoutNotify>[0]) => {
    const plugin = createSignoutNotify(input);
    plugins.push(plugin);
    return plugin;
  };
  afterEach(async () => {
    await Promise.all(plugins.splice(0).map((p) => p.close()));
  });

  it('refuses missing contacts, naming contacts', () => {
    const err = refusal({});
    expect(err.message).to.equal('oidc-signout-notify: invalid option "contacts": must be a function accountId => { email?, locale? }');
  });

  it('refuses contacts that is not a function, naming contacts', () => {
    expect(refusal({ contacts: { email: 'x@example.com' } }).message).to.match(/^oidc-signout-notify: invalid option "contacts": /);
  });

  it('refuses a keyPrefix with a brace, naming keyPrefix', () => {
    expect(refusal({ contacts, keyPrefix: 'a{b' }).message).to.equal('oidc-signout-notify: invalid option "keyPrefix": must not contain { or }');
  });

  it('refuses an unknown option, naming it (strict schema)', () => {
    const { message } = refusal({ contacts, colour: 1 });
    expect(message).to.match(/^oidc-signout-notify: invalid option /);
    expect(message).to.include('"colour"');
  });

  it('refuses a non-SMTP mail.smtpUrl, naming mail.smtpUrl', () => {
    expect(refusal({ contacts, mail: { smtpUrl: 'http://x' } }).message)
      .to.equal('oidc-signout-notify: invalid option "mail.smtpUrl": must be an smtp:// or smtps:// URL');
  });

  it('refuses a redis option that is not an ioredis client, naming redis', () => {
    expect(refusal({ contacts, redis: {} }).message)
      .to.equal('oidc-signout-notify: invalid option "redis": must be an ioredis Redis or Cluster client');
  });

  it('refuses a non-object, naming the options as a whole', () => {
    expect(refusal(undefined).message).to.match(/^oidc-signout-notify: invalid option "\(options\)": /);
  });

  it('fills in the defaults for valid options', () => {
    const logger = recordingLogger();
    const plugin = make({ contacts, logger });
    expect(plugin.options).to.include({
      keyPrefix: 'osn:',
      clockTolerance: 15,
      defaultTtl: 14 * 24 * 60 * 60,
      serviceName: 'Sign-in service',
      contacts,
      logger,
    });
    expect(plugin.options.mail).to.deep.equal({ from: 'no-reply@localhost' });
    expect(plugin.options.redis).to.equal(undefined);
    const resolved = resolveOptions({ contacts });
    expect(resolved).to.include({ keyPrefix: 'osn:', clockTolerance: 15, defaultTtl: 1_209_600, serviceName: 'Sign-in service', contacts });
    expect(resolved.logger).to.equal(undefined);
    expect(plugin.store.prefix).to.equal('osn:');
    expect(plugin.mailer.development).to.equal(true);
    // No Redis client: the embedded store, said loudly.
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes('EMBEDDED IN-MEMORY STORE'))).to.have.length(1);
  });

  it('console.recentSignInSeconds: 300 by default, whole seconds from 1 to a day, else refused naming it', () => {
    expect(resolveOptions({ contacts }).console.recentSignInSeconds).to.equal(300);
    expect(resolveOptions({ contacts, console: { recentSignInSeconds: 60 } }).console.recentSignInSeconds).to.equal(60);
    for (const bad of [0, -5, 1.5, 86_401, '300']) {
      expect(refusal({ contacts, console: { recentSignInSeconds: bad } }).message, String(bad)).to.match(/^oidc-signout-notify: invalid option "console\.recentSignInSeconds": /);
    }
  });

  it('sessionExpiry.sweepEveryMs: 60 s by default, whole ms from 100 to an hour, else refused naming it', () => {
    expect(resolveOptions({ contacts }).sessionExpiry).to.deep.equal({ sweepEveryMs: 60_000 });
    expect(resolveOptions({ contacts, sessionExpiry: { sweepEveryMs: 100 } }).sessionExpiry.sweepEveryMs).to.equal(100);
    for (const bad of [0, 99, 1.5, 3_600_001, '60000']) {
      expect(refusal({ contacts, sessionExpiry: { sweepEveryMs: bad } }).message, String(bad)).to.match(/^oidc-signout-notify: invalid option "sessionExpiry\.sweepEveryMs": /);
    }
    expect(refusal({ contacts, sessionExpiry: { every: 5 } }).message).to.match(/^oidc-signout-notify: invalid option "sessionExpiry": /);
  });

  it('plugin.recentSignIn refuses what it cannot honour (an unknown action, a way back outside /console) and needs attach()', async () => {
    const plugin = make({ contacts, logger: recordingLogger() });
    const ctx = {} as Parameters<SignoutNotify['recentSignIn']>[0];
    const refusedWith = async (request: unknown) => {
      try {
        await plugin.recentSignIn(ctx, request as Parameters<SignoutNotify['recentSignIn']>[1]);
      } catch (err) {
        expect(err).to.be.instanceOf(TypeError);
        return (err as Error).message;
      }
      return 'no error';
    };
    expect(await refusedWith({ action: 'add_address', back: '/console' })).to.equal('oidc-signout-notify: recentSignIn: action must be one of add_passkey, link_account, unblock_site, delete_account, continue');
    for (const back of ['https://evil.example/console', '/console/../auth', '/console/%2e%2E/auth', '/console/.%2e', '/console/callback', '/consoles', '/console?x=1', '/console#Two Words']) {
      expect(await refusedWith({ action: 'continue', back }), back).to.equal('oidc-signout-notify: recentSignIn: back must be a path under /console (a section\'s #anchor at most)');
    }
    expect(await refusedWith({ action: 'add_passkey', back: '/console#passkeys' })).to.equal('oidc-signout-notify: recentSignIn needs the plugin attached to the provider (attach())');
  });

  it('keeps given values', () => {
    const plugin = make({ contacts, logger: recordingLogger(), keyPrefix: 'idp:', clockTolerance: 0, serviceName: 'Example ID', mail: { smtpUrl: 'smtp://127.0.0.1:2525', from: 'Example <id@example.com>' } });
    expect(plugin.options).to.include({ keyPrefix: 'idp:', clockTolerance: 0, serviceName: 'Example ID' });
    expect(plugin.options.mail).to.deep.equal({ smtpUrl: 'smtp://127.0.0.1:2525', from: 'Example <id@example.com>' });
    expect(plugin.mailer.development).to.equal(false);
  });
});

describe('plugin package import', () => {
  it('has no side effects: importing it prints nothing, keeps nothing running and exits 0', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { output += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { output += d; });
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
      new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), 5000); }),
    ]);
    clearTimeout(timer);
    if (result === 'timeout') {
      child.kill('SIGKILL');
      expect.fail(`importing the package kept the process alive for 5 s; output: ${output}`);
    }
    expect(result).to.deep.equal({ code: 0, signal: null });
    expect(output).to.equal('');
  });
});

describe('plugin configure()', () => {
  let plugin: SignoutNotify;
  let logger: ReturnType<typeof recordingLogger>;

  beforeEach(() => {
    logger = recordingLogger();
    plugin = createSignoutNotify({ contacts, logger });
  });
  afterEach(() => plugin.close());

  const ctx = {} as KoaContextWithOIDC;
  type IssueRefreshToken = NonNullable<Configuration['issueRefreshToken']>;
  type Client = Parameters<IssueRefreshToken>[1];
  type Code = Parameters<IssueRefreshToken>[2];
  const fakeClient = (grants: string[]) => ({ grantTypeAllowed: (grant: string) => grants.includes(grant) }) as unknown as Client;
  const code = {} as Code;

  it("keeps the host's configuration and sets rotation, the four features and the adapter", async () => {
    const clients = [{ client_id: 'host-client', client_secret: 'host-secret-0123456789', redirect_uris: ['https://rp.example/cb'] }];
    const findAccount: Configuration['findAccount'] = async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) });
    const ttl = { AccessToken: 600, Session: 3600 };
    const extraParams = ['tenant'];
    const host: Configuration = {
      clients,
      findAccount,
      features: { userinfo: { enabled: false }, devInteractions: { enabled: false } },
      ttl,
      extraParams,
    };
    const snapshot = structuredClone({ clients, ttl, extraParams, features: host.features });
    const out = plugin.configure(host);

    expect(out.clients).to.equal(clients);
    // Wrapped for the organization check, and still the host's accounts.
    expect(await out.findAccount!(undefined as never, 'alice', undefined)).to.include({ accountId: 'alice' });
    expect(out.ttl).to.equal(ttl);
    expect(out.extraParams).to.equal(extraParams);
    expect(out.rotateRefreshToken).to.equal(true);
    expect(out.adapter).to.equal(plugin.adapter.factory);
    expect(out.adapter).to.be.a('function');
    expect(out.issueRefreshToken).to.be.a('function');
    const features = out.features!;
    expect(features.userinfo).to.deep.equal({ enabled: false });
    expect(features.devInteractions).to.deep.equal({ enabled: false });
    for (const name of ['revocation', 'introspection', 'rpInitiatedLogout', 'backchannelLogout'] as const) {
      expect(features[name]?.enabled, name).to.equal(true);
    }
    expect(out.interactions?.policy?.map((p) => p.name)).to.deep.equal(['login', 'site_access', 'consent']);
    for (const name of ['clients', 'findAccount', 'ttl', 'extraParams', 'features', 'adapter', 'rotateRefreshToken', 'issueRefreshToken', 'interactions']) {
      expect(out, name).to.have.property(name);
    }
    // The host's object is left as it was.
    expect(structuredClone({ clients, ttl, extraParams, features: host.features })).to.deep.equal(snapshot);
    expect(host).to.not.have.property('adapter');
    expect(host).to.not.have.property('rotateRefreshToken');
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes('adapter'))).to.have.length(0);
  });

  it('adds acr, amr and auth_time to the openid scope\'s claims, keeping the host\'s claims in either form', () => {
    expect(plugin.configure<Configuration>({}).claims).to.deep.equal({ openid: ['sub', 'acr', 'amr', 'auth_time'] });
    expect(plugin.configure<Configuration>({ claims: { openid: ['sub', 'amr'], email: ['email'] } }).claims)
      .to.deep.equal({ openid: ['sub', 'amr', 'acr', 'auth_time'], email: ['email'] });
    expect(plugin.configure<Configuration>({ claims: { openid: { sub: null }, profile: ['name'] } }).claims)
      .to.deep.equal({ openid: { sub: null, acr: null, amr: null, auth_time: null }, profile: ['name'] });
  });

  it('replaces a host adapter, with a warning', () => {
    const own = class {} as unknown as NonNullable<Configuration['adapter']>;
    const out = plugin.configure<Configuration>({ adapter: own });
    expect(out.adapter).to.equal(plugin.adapter.factory);
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes('own adapter'))).to.have.length(1);
  });

  it('issues a refresh token to a client allowed refresh_token (even without offline_access), not to one that is not', async () => {
    const { issueRefreshToken } = plugin.configure<Configuration>({});
    expect(await issueRefreshToken!(ctx, fakeClient(['authorization_code', 'refresh_token']), code)).to.equal(true);
    expect(await issueRefreshToken!(ctx, fakeClient(['authorization_code']), code)).to.equal(false);
  });

  it("asks the host's issueRefreshToken only for clients allowed refresh_token", async () => {
    const asked: string[] = [];
    const { issueRefreshToken } = plugin.configure<Configuration>({
      issueRefreshToken: async (_ctx, client) => {
        asked.push(client.grantTypeAllowed('refresh_token') ? 'allowed' : 'not allowed');
        return false;
      },
    });
    expect(await issueRefreshToken!(ctx, fakeClient(['authorization_code', 'refresh_token']), code)).to.equal(false);
    expect(await issueRefreshToken!(ctx, fakeClient(['authorization_code']), code)).to.equal(false);
    expect(asked).to.deep.equal(['allowed']);
  });

  type Policy = (ctx: KoaContextWithOIDC, client: unknown, token: unknown) => Promise<boolean>;
  const policies = (host: Configuration) => {
    const { features } = plugin.configure<Configuration>(host);
    return {
      introspection: features!.introspection!.allowedPolicy as unknown as Policy,
      revocation: features!.revocation!.allowedPolicy as unknown as Policy,
    };
  };
  const token = (clientId: string) => {
    const t = { clientId, destroyed: 0, async destroy() { t.destroyed += 1; } };
    return t;
  };
  const own = { clientId: 'a' };

  it('introspection policy: a client sees its own tokens only; a host policy can still say no', async () => {
    const plain = policies({});
    expect(await plain.introspection(ctx, own, token('a'))).to.equal(true);
    expect(await plain.introspection(ctx, own, token('b'))).to.equal(false);
    const vetoed = policies({ features: { introspection: { allowedPolicy: async () => false } } });
    expect(await vetoed.introspection(ctx, own, token('a'))).to.equal(false);
  });

  it('revocation policy: destroys the client\'s own token itself and stops the grant cascade; a host veto destroys nothing', async () => {
    const plain = policies({});
    const mine = token('a');
    expect(await plain.revocation(ctx, own, mine)).to.equal(false);
    expect(mine.destroyed).to.equal(1);
    const theirs = token('b');
    expect(await plain.revocation(ctx, own, theirs)).to.equal(false);
    expect(theirs.destroyed).to.equal(0);
    const vetoed = policies({ features: { revocation: { allowedPolicy: async () => false } } });
    const kept = token('a');
    expect(await vetoed.revocation(ctx, own, kept)).to.equal(false);
    expect(kept.destroyed).to.equal(0);
  });
});
