/**
 * The operator's command from the tarball (`npx oidc-signout-notify ...` in
 * the host app), against Redis and against a Cluster: each verb's exit code
 * and JSON document, the help, usage errors, the typo guard (nothing done
 * without --yes), nothing secret printed. The host's module is
 * host/ops-provider.js (oidc-provider's example Redis layout as the previous
 * store) and, for the default `--module`, README's provider.js.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';

import { expect } from 'chai';
import { Redis } from 'ioredis';

import { exampleRedisAdapter } from '../../src/adoption.ts';
import { GLOBAL_HELP, VERBS } from '../../src/command/args.ts';
import { startCluster, type OwnedCluster } from '../helpers/cluster.ts';
import { dropPrefix, uniquePrefix } from '../helpers/redis.ts';
import { cleanEnv, run } from './app.ts';
import { basic, emptyDatabase, mintSignIn, SITE } from './host-calls.ts';
import { hostService, type Installed } from './host-suites.ts';

type Doc = Record<string, unknown>;

/** `npx oidc-signout-notify <args>` in the host app, on this project's Node (first on the PATH: the bin's `#!/usr/bin/env node`). */
async function npx(installed: Installed, args: string[], env: Record<string, string>) {
  const cli = process.env.npm_execpath ? join(dirname(process.env.npm_execpath), 'npx-cli.js') : undefined;
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  const ran = cli
    ? await run(process.execPath, [cli, '--no-install', 'oidc-signout-notify', ...args], { cwd: installed.app.dir, env: cleanEnv({ ...env, PATH: path }), timeoutMs: 60_000 })
    : await run('npx', ['--no-install', 'oidc-signout-notify', ...args], { cwd: installed.app.dir, env: cleanEnv({ ...env, PATH: path }), timeoutMs: 60_000 });
  let json: Doc | undefined;
  try {
    json = JSON.parse(ran.stdout) as Doc;
  } catch {
    json = undefined;
  }
  return { ...ran, json };
}

const zeros = { waiting: 0, active: 0, delayed: 0, failed: 0, oldestWaitingSeconds: null };

export function cliSuite(installed: Installed): void {
  describe('the operator\'s command from the tarball (npx oidc-signout-notify)', () => {
    let db: { url: string; client: Redis } | undefined;
    let cluster: OwnedCluster | undefined;
    before(async () => {
      // A database of its own (README's provider.js writes under the default prefix), and a Cluster of its own.
      db = await emptyDatabase();
      if (!process.env.REDIS_CLUSTER && spawnSync('redis-server', ['--version']).status !== 0) {
        throw new Error('the command\'s Cluster suite starts a Redis Cluster of its own: it needs redis-server (Debian: apt-get install -y redis-server), or REDIS_CLUSTER naming one');
      }
      cluster = process.env.REDIS_CLUSTER ? undefined : await startCluster();
    });
    after(async () => {
      await db?.client.flushdb();
      await db?.client.quit();
      await cluster?.close();
    });

    it('prints its help (exit 0): the commands, their options, the exit codes; each command\'s own', async () => {
      const help = await npx(installed, ['--help'], {});
      expect([help.code, help.stdout]).to.deep.equal([0, `${GLOBAL_HELP}\n`]);
      const own = await npx(installed, ['delete-account', '--help'], {});
      expect([own.code, own.stdout]).to.deep.equal([0, `${VERBS['delete-account'].help}\n`]);
    });

    it('answers a usage error with exit 2 and { error: "usage" } before it loads anything', async () => {
      const missing = await npx(installed, ['delete-account', '--json'], {});
      expect([missing.code, missing.json]).to.deep.equal([2, { error: 'usage', error_description: 'delete-account needs the accountId (npx oidc-signout-notify --help)' }]);
      const bad = await npx(installed, ['import', '--per-second', 'fast', '--json', '--module', 'nowhere.js'], {});
      expect([bad.code, bad.json]).to.deep.equal([2, { error: 'usage', error_description: '--per-second must be a positive number, not "fast" (npx oidc-signout-notify --help)' }]);
      const unknown = await npx(installed, ['queues', '--force', '--json'], {});
      expect(unknown.code).to.equal(2);
      expect(unknown.json).to.deep.include({ error: 'usage' });
      expect(String(unknown.json!.error_description)).to.match(/^Unknown option '--force'/);
      const text = await npx(installed, ['end-site-access'], {});
      expect([text.code, text.stdout, text.stderr.trim()]).to.deep.equal([2, '', 'oidc-signout-notify: end-site-access needs the clientId (npx oidc-signout-notify --help)']);
    });

    it('reads the default module, ./provider.js (README\'s), and counts its queues: all empty', async () => {
      const queues = await npx(installed, ['queues', '--json'], { REDIS_URL: db!.url, ISSUER: 'http://127.0.0.1:9', SMTP_URL: 'smtp://127.0.0.1:9', HOST_CLIENTS: JSON.stringify([SITE]), HOST_SIGNING_KEY: installed.signingKey, HOST_COOKIE_KEY: 'host-cookie-key-0123456789abcdef' });
      expect([queues.code, queues.json], queues.stderr).to.deep.equal([0, { command: 'queues', queues: { letters: zeros, logouts: zeros, sharedSignals: zeros, sessionExpiry: zeros } }]);
    });

    for (const store of ['Redis', 'Cluster'] as const) {
      describe(`against ${store === 'Redis' ? 'Redis' : 'a Redis Cluster'}: import, end-site-access, end-account-access, delete-account, queues`, () => {
        const previousPrefix = uniquePrefix(`cli-previous-${store}`);
        const hostPrefix = uniquePrefix(`cli-${store}`);
        let env: Record<string, string>;
        let tokens: { access: string; refresh: string };
        let service: Awaited<ReturnType<typeof hostService>> | undefined;

        before(async () => {
          tokens = await mintSignIn(exampleRedisAdapter(db!.client, { prefix: previousPrefix }), installed.signingKey);
          const where: Record<string, string> = store === 'Cluster' ? { REDIS_CLUSTER: process.env.REDIS_CLUSTER ?? cluster!.spec } : { REDIS_URL: db!.url };
          const settings: Record<string, string> = { ...where, HOST_KEY_PREFIX: hostPrefix, PREVIOUS_REDIS_URL: db!.url, PREVIOUS_PREFIX: previousPrefix };
          // The service sends no letters here: the queues are the command's to count (its own plugin would start a worker, but for command mode).
          service = await hostService(installed, 'ops-server.js', { env: { ...settings, LETTERS_WORKER: 'off' } });
          env = {
            ...settings, ISSUER: service.issuer, SMTP_URL: service.smtp.url, HOST_CLIENTS: JSON.stringify([SITE]),
            HOST_SIGNING_KEY: installed.signingKey, HOST_COOKIE_KEY: 'host-cookie-key-0123456789abcdef',
            // The Cluster pass names its module by the environment variable instead of --module.
            ...(store === 'Cluster' ? { OIDC_SIGNOUT_NOTIFY_MODULE: './ops-provider.js' } : {}),
          };
        });
        after(async () => {
          await service?.stop();
          await dropPrefix(db!.client, previousPrefix);
        });

        const cli = (args: string[]) => npx(installed, store === 'Redis' ? [...args, '--module', './ops-provider.js'] : args, env);
        const introspect = async (token: string) => {
          const res = await fetch(`${service!.issuer}/token/introspection`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }) });
          return (await res.json() as { active: boolean }).active;
        };
        const printedNoSecret = (ran: { stdout: string; stderr: string }) => {
          for (const secret of [tokens.access, tokens.refresh, SITE.client_secret, 'host-cookie-key-0123456789abcdef']) expect(`${ran.stdout}${ran.stderr}`).to.not.include(secret);
        };

        it('import --dry-run counts what would move and writes nothing (exit 0); import moves it (exit 0, progress on stderr); import --status says the window closed', async () => {
          const dry = await cli(['import', '--dry-run', '--json']);
          expect(dry.code, dry.stderr).to.equal(0);
          const dryProgress = dry.json!.progress as Doc;
          expect(dry.json).to.deep.equal({ command: 'import', finished: false, progress: dryProgress });
          expect(dryProgress).to.deep.equal({
            dryRun: true, seen: 3, moved: 3, alreadyMoved: 0, expired: 0, gone: 0, refused: 0, failed: 0, unreadable: 0, total: 3,
            perSecond: dryProgress.perSecond, etaSeconds: 0, checkpoint: 'end', startedAt: dryProgress.startedAt,
          });
          const untouched = await cli(['import', '--status', '--json']);
          expect([untouched.code, untouched.json], 'a dry run records nothing').to.deep.equal([0, { command: 'import', status: { open: true, running: false } }]);

          const done = await cli(['import', '--json']);
          expect(done.code, done.stderr).to.equal(0);
          const progress = done.json!.progress as Doc;
          expect(done.json).to.deep.equal({ command: 'import', finished: true, progress });
          expect(progress).to.deep.equal({
            dryRun: false, seen: 3, moved: 3, alreadyMoved: 0, expired: 0, gone: 0, refused: 0, failed: 0, unreadable: 0, total: 3,
            perSecond: progress.perSecond, etaSeconds: 0, checkpoint: 'end', startedAt: progress.startedAt, finishedAt: progress.finishedAt,
          });
          expect(progress.finishedAt).to.be.a('number').and.at.least(progress.startedAt as number);
          const lines = done.stderr.split('\n').filter((l) => l.startsWith('{"progress":'));
          expect(lines.length).to.be.at.least(1);
          expect((JSON.parse(lines.at(-1)!) as { progress: Doc }).progress).to.deep.include({ seen: 3, moved: 3 });
          printedNoSecret(done);
          expect(await introspect(tokens.access)).to.equal(true);

          const status = await cli(['import', '--status', '--json']);
          expect([status.code, status.json]).to.deep.equal([0, {
            command: 'import',
            status: {
              open: false, closedBy: 'import', running: false,
              import: { seen: 3, moved: 3, alreadyMoved: 0, expired: 0, gone: 0, refused: 0, failed: 0, unreadable: 0, total: 3, checkpoint: 'end', startedAt: progress.startedAt, finishedAt: progress.finishedAt },
            },
          }]);
        });

        it('queues --json: each queue empty (exit 0)', async () => {
          const queues = await cli(['queues', '--json']);
          expect([queues.code, queues.json], queues.stderr).to.deep.equal([0, { command: 'queues', queues: { letters: zeros, logouts: zeros, sharedSignals: zeros, sessionExpiry: zeros } }]);
        });

        it('end-site-access: an unknown site ends nothing (exit 3); without --yes it says what it would do (exit 4, the token still active); with --yes it ends it (exit 0, the token inactive)', async () => {
          const unknown = await cli(['end-site-access', 'host-sight', '--json']);
          expect([unknown.code, unknown.json]).to.deep.equal([3, { error: 'not_found', error_description: 'no site with client id "host-sight": nothing ended', command: 'end-site-access', clientId: 'host-sight' }]);
          const asked = await cli(['end-site-access', SITE.client_id, '--json']);
          expect([asked.code, asked.json]).to.deep.equal([4, { command: 'end-site-access', clientId: SITE.client_id, done: false, site: { clientId: SITE.client_id, name: 'Host Site' } }]);
          expect(await introspect(tokens.access)).to.equal(true);
          const ended = await cli(['end-site-access', SITE.client_id, '--yes', '--json']);
          expect([ended.code, ended.json]).to.deep.equal([0, { command: 'end-site-access', clientId: SITE.client_id, done: true, endedAt: ended.json?.endedAt }]);
          expect(Math.abs(Date.parse(String(ended.json!.endedAt)) - Date.now())).to.be.below(60_000);
          expect(await introspect(tokens.access)).to.equal(false);
          printedNoSecret(ended);
        });

        it('end-account-access: without --yes what the plugin holds of the person (exit 4); with --yes done (exit 0)', async () => {
          const asked = await cli(['end-account-access', 'alice', '--json']);
          expect([asked.code, asked.json]).to.deep.equal([4, { command: 'end-account-access', accountId: 'alice', done: false, holds: { sites: 1, sessions: 0, adoptionWindowOpen: false } }]);
          const ended = await cli(['end-account-access', 'alice', '--yes', '--json']);
          expect([ended.code, ended.json]).to.deep.equal([0, { command: 'end-account-access', accountId: 'alice', done: true, endedAt: ended.json?.endedAt }]);
          expect(Math.abs(Date.parse(String(ended.json!.endedAt)) - Date.now())).to.be.below(60_000);
        });

        it('delete-account: a typo shows that the plugin holds nothing of that id and deletes nothing (exit 4); with --yes the person is deleted (exit 0), and the Shared Signals queue holds the account-purged cause (no worker in the command took it, though its module asks for one)', async () => {
          const typo = await cli(['delete-account', 'alcie', '--json']);
          expect([typo.code, typo.json]).to.deep.equal([4, { command: 'delete-account', accountId: 'alcie', done: false, holds: { sites: 0, sessions: 0, adoptionWindowOpen: false } }]);
          const asked = await cli(['delete-account', 'alice', '--json']);
          expect([asked.code, asked.json]).to.deep.equal([4, { command: 'delete-account', accountId: 'alice', done: false, holds: { sites: 1, sessions: 0, adoptionWindowOpen: false } }]);
          const deleted = await cli(['delete-account', 'alice', '--yes', '--json']);
          expect(deleted.code, deleted.stderr).to.equal(0);
          expect(deleted.json).to.deep.equal({ command: 'delete-account', accountId: 'alice', done: true, sites: 1, keysErased: deleted.json!.keysErased, jobsDropped: 0 });
          expect(deleted.json!.keysErased).to.be.a('number').and.above(0);
          const again = await cli(['delete-account', 'alice', '--json']);
          expect(again.json).to.deep.include({ holds: { sites: 0, sessions: 0, adoptionWindowOpen: false } });

          const queues = await cli(['queues', '--json']);
          const signals = (queues.json!.queues as Record<string, Doc>).sharedSignals!;
          expect([queues.code, queues.json]).to.deep.equal([0, { command: 'queues', queues: { letters: zeros, logouts: zeros, sharedSignals: { ...zeros, waiting: 1, oldestWaitingSeconds: signals.oldestWaitingSeconds }, sessionExpiry: zeros } }]);
          expect(signals.oldestWaitingSeconds).to.be.a('number').and.within(0, 60);
        });
      });
    }
  });
}
